/*
 * initrd.h - finding programs in the initial RAM disk.
 */
#ifndef INITRD_H
#define INITRD_H

#include <stdint.h>
#include <stddef.h>

void initrd_init(uint64_t start, uint64_t end);
/* Look up a file by absolute path ("/bin/sh"); 0 and its bytes, or K_E_NOENT. */
int  initrd_find(const char *path, const uint8_t **data, size_t *size);
int  initrd_count(void);
void initrd_syscall_init(void);      /* SYS_initrd_map */

#endif
