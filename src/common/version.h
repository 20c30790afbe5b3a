/*
 * version.h - heapprof's version, one string for the whole tree: the
 * command's --version and the recorder's META record.
 */
#ifndef HP_COMMON_VERSION_H
#define HP_COMMON_VERSION_H

#define HP_VERSION "0.1.0"

#endif
