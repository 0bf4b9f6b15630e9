/*
 * exotool_fat.h - the FAT subcommands of tools/exotool (fat.c): exotool's
 * main hands every "fat-..." command here.
 */
#ifndef EXOTOOL_FAT_H
#define EXOTOOL_FAT_H

int exotool_fat(int argc, char **argv);

#endif
