/*
 * stdio.c - picolibc's standard streams, as buffered streams over
 * descriptors 0, 1 and 2.  Because they go through the descriptor table, a
 * program whose stdout is redirected to a file needs no special case.
 * stdout is line-buffered, stderr unbuffered.
 */
#include <stdio.h>
#include <stdio-bufio.h>
#include <unistd.h>

static char in_buf[256], out_buf[512];

static struct __file_bufio std_in =
	FDEV_SETUP_BUFIO(0, in_buf, sizeof in_buf, read, write, lseek, close, __SRD, 0);
static struct __file_bufio std_out =
	FDEV_SETUP_BUFIO(1, out_buf, sizeof out_buf, read, write, lseek, close, __SWR, __BLBF);

/* stderr: each character straight to descriptor 2. */
static int err_put(char c, FILE *f)
{
	(void)f;
	return write(2, &c, 1) == 1 ? (unsigned char)c : EOF;
}
static FILE std_err = FDEV_SETUP_STREAM(err_put, NULL, NULL, _FDEV_SETUP_WRITE);

FILE *const stdin = &std_in.xfile.cfile.file;
FILE *const stdout = &std_out.xfile.cfile.file;
FILE *const stderr = &std_err;
