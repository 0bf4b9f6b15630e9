/*
 * posix.c - the POSIX file calls over the mount table (vfs.h): open and the
 * calls on names (stat, unlink, rename, mkdir, rmdir, chdir, getcwd),
 * directory streams, and the descriptor operations for open files.  Errors
 * become -1 and errno, as POSIX wants.
 *
 * It also carries the file system across spawn.  The kernel knows nothing
 * of files or descriptors, so what a Unix child would inherit travels in
 * the environment instead: EXOMOUNTS (the mount table), PWD (the working
 * directory) and EXO_FD0/1/2 (what the shell set up for standard input,
 * output and error: a file, a pipe's kernel handle, the null descriptor or
 * another descriptor; see redirect below).  libos_fs_init applies them
 * before main runs and removes the EXO_FD variables, so the program's own
 * children start with the console again.  It also mounts the programs of
 * the initrd at /bin (initrdfs.c) and /dev/null at /dev (devfs.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include "libos/fd.h"
#include "libos/vfs.h"
#include "libos/files.h"
#include "libos/exo.h"
#include "libos/initrdfs.h"
#include "libos/devfs.h"

/* Set errno from a negative result and return -1; pass others through. */
static long ret(long r)
{
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* ---- open files as descriptors ----------------------------------------------- */

static ssize_t f_read(void *obj, void *buf, size_t n) { return ret(vfs_read(obj, buf, n)); }
static ssize_t f_write(void *obj, const void *buf, size_t n) { return ret(vfs_write(obj, buf, n)); }
static off_t f_lseek(void *obj, off_t off, int whence) { return (off_t)ret((long)vfs_lseek(obj, off, whence)); }
static int f_close(void *obj) { return (int)ret(vfs_close(obj)); }
static ssize_t f_pread(void *obj, void *buf, size_t n, off_t off)
{
	if (off < 0) return ret(-EINVAL);
	return ret(vfs_pread(obj, buf, n, (uint64_t)off));
}
static ssize_t f_pwrite(void *obj, const void *buf, size_t n, off_t off)
{
	if (off < 0) return ret(-EINVAL);
	return ret(vfs_pwrite(obj, buf, n, (uint64_t)off));
}
static int f_ftruncate(void *obj, off_t len)
{
	if (len < 0) return (int)ret(-EINVAL);
	return (int)ret(vfs_ftruncate(obj, (uint64_t)len));
}
static int f_fsync(void *obj) { return (int)ret(vfs_fsync(obj)); }
static void f_dup(void *obj) { vfs_hold(obj); }

static void to_stat(const struct libfs_stat *ls, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_ino = (ino_t)ls->ino;
	st->st_mode = (mode_t)((ls->type == LIBFS_T_DIR ? S_IFDIR : S_IFREG) | (ls->perm & 07777));
	st->st_nlink = (nlink_t)ls->nlink;
	st->st_size = (off_t)ls->size;
	st->st_blksize = 4096;
	st->st_blocks = (blkcnt_t)ls->blocks;
	st->st_mtim.tv_sec = (time_t)(ls->mtime / 1000000000u);
	st->st_mtim.tv_nsec = (long)(ls->mtime % 1000000000u);
	st->st_ctim.tv_sec = (time_t)(ls->ctime / 1000000000u);
	st->st_ctim.tv_nsec = (long)(ls->ctime % 1000000000u);
	st->st_atim = st->st_mtim;
}

static int f_fstat(void *obj, struct stat *st)
{
	struct libfs_stat ls;
	int r = vfs_fstat(obj, &ls);
	if (r < 0) return (int)ret(r);
	to_stat(&ls, st);
	return 0;
}

static const struct fd_ops file_ops = {
	.read = f_read,
	.write = f_write,
	.lseek = f_lseek,
	.close = f_close,
	.fstat = f_fstat,
	.pread = f_pread,
	.pwrite = f_pwrite,
	.ftruncate = f_ftruncate,
	.fsync = f_fsync,
	.dup = f_dup,
};

static int lflags(int flags)
{
	int lf = 0;
	switch (flags & O_ACCMODE) {
	case O_RDONLY: lf = LIBFS_O_READ; break;
	case O_WRONLY: lf = LIBFS_O_WRITE; break;
	default:       lf = LIBFS_O_READ | LIBFS_O_WRITE; break;
	}
	if (flags & O_CREAT) lf |= LIBFS_O_CREAT;
	if (flags & O_EXCL) lf |= LIBFS_O_EXCL;
	if (flags & O_TRUNC) lf |= LIBFS_O_TRUNC;
	if (flags & O_APPEND) lf |= VFS_O_APPEND;
	if (flags & O_SYNC) lf |= LIBFS_O_SYNC;
	if (flags & O_DIRECTORY) lf |= LIBFS_O_DIR;
	return lf;
}

static int open_at_least(const char *path, int flags, mode_t mode, int min)
{
	struct vfile *f;
	int r = vfs_open(path, lflags(flags), (uint32_t)mode, &f);
	if (r < 0) return (int)ret(r);
	int fd = fd_install(&file_ops, f, min);
	if (fd < 0) vfs_close(f);            /* errno is EMFILE */
	return fd;
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & O_CREAT) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return open_at_least(path, flags, mode, 0);
}

int creat(const char *path, mode_t mode)
{
	return open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

/* ---- calls on names --------------------------------------------------------------- */

int stat(const char *path, struct stat *st)
{
	struct libfs_stat ls;
	int r = vfs_stat(path, &ls);
	if (r < 0) return (int)ret(r);
	to_stat(&ls, st);
	return 0;
}

int lstat(const char *path, struct stat *st) { return stat(path, st); }
/* truncate(path): ftruncate through a descriptor of its own, opened for
 * writing (so a directory is EISDIR, a missing file ENOENT). */
int truncate(const char *path, off_t len)
{
	if (len < 0) return (int)ret(-EINVAL);
	struct vfile *f;
	int r = vfs_open(path, lflags(O_WRONLY), 0, &f);
	if (r < 0) return (int)ret(r);
	r = vfs_ftruncate(f, (uint64_t)len);
	int c = vfs_close(f);
	return (int)ret(r < 0 ? r : c);
}
int unlink(const char *path) { return (int)ret(vfs_unlink(path)); }
int rename(const char *from, const char *to) { return (int)ret(vfs_rename(from, to)); }
int mkdir(const char *path, mode_t mode) { return (int)ret(vfs_mkdir(path, (uint32_t)mode)); }
int rmdir(const char *path) { return (int)ret(vfs_rmdir(path)); }
int chdir(const char *path) { return (int)ret(vfs_chdir(path)); }
void sync(void) { vfs_sync(); }

char *getcwd(char *buf, size_t size)
{
	const char *c = vfs_getcwd();
	if (buf == NULL || size == 0) { errno = EINVAL; return NULL; }
	if (strlen(c) + 1 > size) { errno = ERANGE; return NULL; }
	strcpy(buf, c);
	return buf;
}

/* ---- directory streams ------------------------------------------------------------- */

struct libos_dir {
	int fd;
	struct dirent de;
};

DIR *opendir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY);
	if (fd < 0) return NULL;
	DIR *d = calloc(1, sizeof *d);
	if (d == NULL) { close(fd); errno = ENOMEM; return NULL; }
	d->fd = fd;
	return d;
}

struct dirent *readdir(DIR *d)
{
	struct vfile *f = fd_object(d->fd, &file_ops);
	if (f == NULL) { errno = EBADF; return NULL; }
	struct libfs_dirent le;
	int r = vfs_readdir(f, &le);
	if (r <= 0) {
		if (r < 0) errno = -r;
		return NULL;
	}
	d->de.d_ino = (ino_t)le.ino;
	d->de.d_type = le.type == LIBFS_T_DIR ? DT_DIR : DT_REG;
	strcpy(d->de.d_name, le.name);
	return &d->de;
}

void rewinddir(DIR *d)
{
	struct vfile *f = fd_object(d->fd, &file_ops);
	if (f) vfs_rewinddir(f);
}

int closedir(DIR *d)
{
	int r = close(d->fd);
	free(d);
	return r;
}

int dirfd(DIR *d) { return d->fd; }

/* ---- beyond POSIX (files.h) --------------------------------------------------------- */

int fs_persist(int fd, int model)
{
	struct vfile *f = fd_object(fd, &file_ops);
	if (f == NULL) { errno = EBADF; return -1; }
	return (int)ret(vfs_persist(f, model));
}

int fs_statfs(const char *path, struct libfs_statfs *st) { return (int)ret(vfs_statfs(path, st)); }
int fs_stat(const char *path, struct libfs_stat *st) { return (int)ret(vfs_stat(path, st)); }

static int export_mounts(void)
{
	static char spec[VFS_MAX_MOUNTS * (LIBFS_PATH_MAX + VFS_SPEC_MAX)];
	int r = vfs_spec(spec, sizeof spec);
	if (r < 0) return (int)ret(r);
	return setenv(VFS_ENV_MOUNTS, spec, 1);
}

int fs_mount(const char *prefix, const char *type, const char *opts)
{
	int r = vfs_mount(prefix, type, opts, 1);
	if (r < 0) return (int)ret(r);
	return export_mounts();
}

int fs_umount(const char *prefix)
{
	int r = vfs_umount(prefix);
	if (r < 0) return (int)ret(r);
	return export_mounts();
}

int fs_release(void) { return (int)ret(vfs_release_idle()); }

int fs_mount_info(int i, const char **prefix, const char **type, const char **opts, int *mounted)
{
	return (int)ret(vfs_mount_info(i, prefix, type, opts, mounted));
}

/* ---- start and exit ---------------------------------------------------------------- */

/* Apply a redirection to descriptor fd:
 *   r:PATH, w:PATH, a:PATH   open PATH to read, to write (truncating), to append
 *   k:H                      kernel handle H, which the parent passed (a pipe end)
 *   n:                       the null descriptor (background jobs' input)
 *   d:N                      the same as descriptor N, once N is set up (2>&1)
 */
static void redirect(int fd, const char *spec)
{
	int flags;
	if (spec[0] == 0 || spec[1] != ':') return;
	switch (spec[0]) {
	case 'r': flags = O_RDONLY; break;
	case 'w': flags = O_WRONLY | O_CREAT | O_TRUNC; break;
	case 'a': flags = O_WRONLY | O_CREAT | O_APPEND; break;
	case 'k': libos_fd_handle(atoi(spec + 2), fd); return;
	case 'n': libos_fd_null(fd); return;
	case 'd': dup2(atoi(spec + 2), fd); return;
	default: return;
	}
	int nfd = open(spec + 2, flags, 0644);
	if (nfd < 0) {
		fprintf(stderr, "sh: %s: %s\n", spec + 2, strerror(errno));
		exit(1);
	}
	if (nfd != fd) {
		dup2(nfd, fd);
		close(nfd);
	}
}

/* What 0..2 were set up from, when a file ("a:PATH" or "r:PATH"), and the
 * open file that became: a shell passes them on to its children. */
static char std_spec[3][LIBFS_PATH_MAX + 4];
static void *std_obj[3];

const char *libos_fd_inherit(int fd, int *handle)
{
	*handle = -1;
	if (fd < 0 || fd > 2)
		return NULL;
	int h = libos_handle_of(fd);
	if (h >= 0) {
		*handle = h;
		return "k:";
	}
	if (libos_fd_is_null(fd))
		return "n:";
	void *f = fd_object(fd, &file_ops);
	if (f != NULL && f == std_obj[fd])
		return std_spec[fd];
	return NULL;                 /* the console, or something we cannot name */
}

void libos_fs_init(void)
{
	const char *spec = getenv(VFS_ENV_MOUNTS);
	char def[256];
	if (spec == NULL) {
		/* No table inherited (the first process): take it from the boot
		 * options, or mount unixfs from disk unit 0 at / if there is one. */
		if (exo_bootopt("mounts", def, sizeof def))
			spec = def;
		else if (exo_kinfo()->ndisks > 0)
			spec = "/=unixfs:unit=0";
		else
			spec = "";
	}
	/* The programs as files (initrdfs.c) and /dev/null (devfs.c): always
	 * there, mounted only when someone looks. */
	if (libfs_register(&initrdfs_ops) < 0 || libfs_register(&devfs_ops) < 0)
		fprintf(stderr, "libos: cannot register the initrd or dev file system\n");
	vfs_load_spec(spec);
	vfs_mount("/bin", "initrd", "dir=bin", 0);
	vfs_mount("/dev", "dev", "", 0);
	const char *pwd = getenv("PWD");
	char abs[LIBFS_PATH_MAX];
	if (pwd != NULL && vfs_normalize(pwd, abs) == 0)
		vfs_chdir_unchecked(abs);

	/* Duplicates ("d:N") last, so that they copy the finished descriptors. */
	static const char *const names[3] = { "EXO_FD0", "EXO_FD1", "EXO_FD2" };
	char copy[3][LIBFS_PATH_MAX + 4];
	for (int fd = 0; fd < 3; fd++) {
		const char *r = getenv(names[fd]);
		copy[fd][0] = 0;
		if (r != NULL) {
			snprintf(copy[fd], sizeof copy[fd], "%s", r);
			unsetenv(names[fd]);
			if (copy[fd][0] != 'd')
				redirect(fd, copy[fd]);
		}
	}
	for (int fd = 0; fd < 3; fd++)
		if (copy[fd][0] == 'd')
			redirect(fd, copy[fd]);
	/* A file given to us is given to our children by name: appending, so
	 * that what we and they write follows what came before. */
	for (int fd = 0; fd < 3; fd++) {
		char m = copy[fd][0];
		if ((m == 'r' || m == 'w' || m == 'a') && copy[fd][1] == ':') {
			snprintf(std_spec[fd], sizeof std_spec[fd], "%c:%s", m == 'r' ? 'r' : 'a', copy[fd] + 2);
			std_obj[fd] = fd_object(fd, &file_ops);
		}
	}
}

int libos_exit_failed;

void libos_fs_exit(void)
{
	/* Close descriptors first (stdout may be a file), then give 0..2 back
	 * to the console so a message about a failed write-back can be seen. */
	int closing = 0;
	for (int fd = 0; fd < LIBOS_NFD; fd++)
		if (fd_object(fd, &file_ops) != NULL && close(fd) < 0 && closing == 0)
			closing = errno;
	fd_init();
	int r = vfs_shutdown();
	if (closing != 0 || r < 0) {
		/* What was written is in memory only: say so where it can be
		 * seen, and in the exit status (start.c's _exit). */
		fprintf(stderr, "%s: at exit, writing files back failed: %s; what it wrote since "
		        "its last successful sync may be lost\n", libos_prog_name,
		        strerror(r < 0 ? -r : closing));
		libos_exit_failed = 1;
	}
}
