/*
 * exotool_explain.h - exotool's errors in words (explain.c), shared by its
 * exodisk, unixfs and FAT subcommands: what is wrong with an image that
 * cannot be used (not an exodisk, the wrong key, a format version this
 * exotool does not read, truncated, damaged at sector N), never a bare
 * error number.
 */
#ifndef EXOTOOL_EXPLAIN_H
#define EXOTOOL_EXPLAIN_H

#include <stdint.h>

struct exodisk;

/* The image's size in sectors; on a missing, empty or partial-sector file,
 * says so and exits with status 1. */
uint64_t exotool_image_sectors(const char *image);

/* Why the exodisk core answered `code` (from ed_mount, ed_check_disk, a
 * request) on `image`: a sentence, looking at the image's superblocks
 * itself where that tells more (a foreign or blank image, another format
 * version, a truncated file, the wrong key).  `ed` is the core that tried
 * (for the sector it found bad) or NULL.  The text lives until the next
 * call. */
const char *exotool_why(const char *image, long code, struct exodisk *ed);

/* The first violation the exodisk's checker finds on `image` under `key`,
 * as "damaged at sector N: what", or NULL if it finds none.  It loads the
 * image afresh (resetting the block layer): call it only on the way out,
 * after an operation failed for no reason the caller can tell. */
const char *exotool_find_damage(const char *image, const char key[16]);

/* Print "exotool: WHAT: why" and exit with status 1.  `code` is 0 (WHAT
 * says it all), a negative errno from a library file system (its text,
 * then the damage the exodisk's checker finds on the image, if any: the
 * likelier cause than the errno's own words), or an exodisk or block-layer
 * code (exotool_why). */
void exotool_die(const char *image, const char key[16], struct exodisk *ed, const char *what,
                 long code) __attribute__((noreturn));

#endif
