/*
 * maps.h - the regions of the program's address space that hold its heap,
 * for the MAPS record (format.h) written with each BLOCKS record
 * (--live-blocks): glibc's brk heap, the heaps of its other arenas, its
 * mmap'd chunks, and any other mapping that holds a live block, each with
 * its resident bytes.
 *
 * One function, called by the writer under its lock. Everything it uses
 * is mapped by itself (never the program's malloc) and kept for the next
 * call; it opens /proc/self/maps on a descriptor of its own and closes it
 * before returning, and touches no descriptor, lock or signal of the
 * program.
 */
#ifndef HP_RECORDER_MAPS_H
#define HP_RECORDER_MAPS_H

#include <stdint.h>

#include "../format/encode.h"

/*
 * Three steps, under the writer's lock: hp_maps_read finds the regions
 * from /proc/self/maps and glibc's own headers (a heap's heap_info, an
 * mmap'd chunk's size word, read with hp_os_read_self, which cannot fault,
 * and only from pages already resident); hp_maps_mark marks the region
 * holding each live block (the writer's walk of the BLOCKS record); then
 * hp_maps_encode appends the MAPS payload to out: seq, then in address
 * order every brk heap, arena heap and mmap'd chunk, and every other
 * region marked, each with its resident bytes (mincore(2)).
 *
 * hp_maps_read returns 0, or -errno when /proc/self/maps cannot be read
 * or the table cannot be mapped (hp_maps_encode then fails with it too).
 * hp_maps_encode returns 0 or out->err.
 *
 * All async-signal-safe (open, read, close, mincore, process_vm_readv,
 * mmap); they allocate only memory they map themselves (the table of
 * regions and their names, grown by doubling and kept); they take no lock:
 * the caller (the writer) holds its own, which serialises calls.
 * hp_maps_mark is a binary search (it runs under a shard lock of the live
 * register); hp_maps_read uses about 200 bytes of stack and a static 4 KiB
 * line buffer, hp_maps_encode 1 KiB (hp_os_resident_bytes).
 */
int hp_maps_read(void);
void hp_maps_mark(uint64_t address);
int hp_maps_encode(struct hp_buf *out, uint64_t seq);

/* The bytes the table holds (mapped), for the recorder's own usage. No
 * lock (read under the writer's). Async-signal-safe. */
uint64_t hp_maps_bytes(void);

#endif
