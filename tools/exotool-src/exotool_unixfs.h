/*
 * exotool_unixfs.h - the unixfs subcommands of tools/exotool (unixfs.c).
 * exotool's main hands every "ufs-..." command here.
 */
#ifndef EXOTOOL_UNIXFS_H
#define EXOTOOL_UNIXFS_H

int exotool_unixfs(int argc, char **argv);

#endif
