/*
 * api.c - the public API of include/heapprof.h.
 */
#include "../../include/heapprof.h"

#include <errno.h>

#include "../format/format.h"
#include "recorder.h"
#include "writer.h"

__attribute__((visibility("default"))) int heapprof_dump(void)
{
	int err;

	if (hp_state != HP_STATE_ACTIVE)
		return -ENODEV;
	hp_self.forwarding++;
	err = hp_writer_snapshot(HP_SNAP_API, 0, 0);
	hp_self.forwarding--;
	return err;
}

__attribute__((visibility("default"))) int heapprof_active(void)
{
	return hp_state == HP_STATE_ACTIVE;
}
