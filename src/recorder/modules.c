/*
 * modules.c - the module map (see modules.h).
 */
#include "modules.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>

#include "../format/records.h"
#include "config.h"
#include "os.h"
#include "spin.h"

#define MAX_MODULES 4096
#define MAX_EVENTS (2 * MAX_MODULES)
#define MAX_SEGMENTS 8
#define MAX_BUILD_ID 64
#define PATH_BYTES (1u << 20) /* all paths, NUL-terminated, back to back */

struct module {
	uint64_t bias;
	const void *phdr; /* with bias, identifies a loaded object */
	uint32_t path;    /* offset into paths */
	uint32_t nseg;
	uint32_t build_id_len;
	int loaded;
	int seen; /* during a refresh */
	uint8_t build_id[MAX_BUILD_ID];
	struct hp_rec_segment seg[MAX_SEGMENTS];
};

struct event {
	uint32_t kind, module;
	uint64_t time_ns;
};

/* All mapped at init. The tables are written under lock; events below
 * nevents are immutable, and nevents is published with release. */
static struct module *modules;
static uint32_t nmodules;
static struct event *events;
static uint32_t nevents;
static char *paths;
static uint32_t paths_used;
static const struct hp_config *config; /* set at init: its start_ns */
static struct hp_spin lock;

int hp_modules_init(const struct hp_config *c)
{
	config = c;
	modules = hp_os_map(MAX_MODULES * sizeof *modules);
	events = hp_os_map(MAX_EVENTS * sizeof *events);
	paths = hp_os_map(PATH_BYTES);
	if (!modules || !events || !paths)
		return -ENOMEM;
	return 0;
}

static void log_event(uint32_t kind, uint32_t module)
{
	if (nevents >= MAX_EVENTS)
		return;
	events[nevents] = (struct event){kind, module, hp_os_now_ns() - config->start_ns};
	__atomic_store_n(&nevents, nevents + 1, __ATOMIC_RELEASE);
}

/* Under lock: path buffers for intern_path. */
static char resolved[4096], maps_buf[8192];

/* A module's path as the capture needs it: absolute. The loader keeps
 * the name a library was opened by, relative for dlopen("./lib.so") or a
 * relative LD_LIBRARY_PATH; the mapping in /proc/self/maps has the file's
 * absolute path whatever the working directory is now. */
static uint32_t intern_path(const char *name, uintptr_t mapped_at)
{
	size_t len;
	uint32_t at = paths_used;

	if (!name || !*name) { /* the main program */
		hp_os_exe_path(resolved, sizeof resolved);
		name = resolved;
	} else if (name[0] != '/' && strchr(name, '/') &&
		   hp_os_mapped_path(mapped_at, resolved, sizeof resolved, maps_buf,
				     sizeof maps_buf) == 0) {
		name = resolved;
	}
	len = strlen(name) + 1;
	if (paths_used + len > PATH_BYTES)
		return 0; /* offset 0 holds the first path; better than nothing */
	memcpy(paths + at, name, len);
	paths_used += (uint32_t)len;
	return at;
}

static void read_build_id(struct module *m, const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const uint8_t *name = p + sizeof *n;
			const uint8_t *desc = name + ((n->n_namesz + 3) & ~3u);
			const uint8_t *next = desc + ((n->n_descsz + 3) & ~3u);
			if (next > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && n->n_descsz <= MAX_BUILD_ID) {
				memcpy(m->build_id, desc, n->n_descsz);
				m->build_id_len = n->n_descsz;
				return;
			}
			p = next;
		}
	}
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct module *m;
	(void)size;
	(void)arg;

	for (uint32_t i = 0; i < nmodules; i++) {
		m = &modules[i];
		if (m->loaded && m->bias == info->dlpi_addr && m->phdr == info->dlpi_phdr) {
			m->seen = 1;
			return 0;
		}
	}
	if (nmodules >= MAX_MODULES)
		return 0;
	m = &modules[nmodules];
	memset(m, 0, sizeof *m);
	m->bias = info->dlpi_addr;
	m->phdr = info->dlpi_phdr;
	for (int i = 0; i < info->dlpi_phnum && m->nseg < MAX_SEGMENTS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD)
			m->seg[m->nseg++] = (struct hp_rec_segment){ph->p_vaddr, ph->p_memsz,
								    ph->p_offset, ph->p_flags};
	}
	m->path = intern_path(info->dlpi_name, m->nseg ? m->bias + m->seg[0].vaddr : m->bias);
	read_build_id(m, info);
	m->loaded = m->seen = 1;
	log_event(HP_MOD_LOAD, nmodules);
	nmodules++;
	return 0;
}

void hp_modules_refresh(int wait)
{
	if (!modules)
		return;
	if (wait)
		hp_spin_lock(&lock);
	else if (!hp_spin_trylock(&lock))
		return;
	for (uint32_t i = 0; i < nmodules; i++)
		modules[i].seen = 0;
	hp_os_dl_iterate(visit, NULL);
	for (uint32_t i = 0; i < nmodules; i++) {
		if (modules[i].loaded && !modules[i].seen) {
			modules[i].loaded = 0;
			log_event(HP_MOD_UNLOAD, i);
		}
	}
	hp_spin_unlock(&lock);
}

uint32_t hp_modules_ranges(struct hp_modules_range *out, uint32_t cap)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < nmodules; i++) {
		const struct module *m = &modules[i];
		for (uint32_t k = 0; m->loaded && k < m->nseg && n < cap; k++) {
			struct hp_modules_range r = {m->bias + m->seg[k].vaddr,
						     m->bias + m->seg[k].vaddr + m->seg[k].memsz};
			uint32_t j = n++;
			/* Insertion sort: a few hundred segments, once a snapshot. */
			while (j && out[j - 1].lo > r.lo) {
				out[j] = out[j - 1];
				j--;
			}
			out[j] = r;
		}
	}
	return n;
}

uint32_t hp_modules_events(void)
{
	return __atomic_load_n(&nevents, __ATOMIC_ACQUIRE);
}

void hp_modules_encode(struct hp_buf *b, uint32_t from, uint32_t to)
{
	hp_rec_count_put(b, to - from);
	for (uint32_t e = from; e < to; e++) {
		const struct module *m = &modules[events[e].module];
		struct hp_rec_module_event ev = {
			.kind = events[e].kind,
			.time_ns = events[e].time_ns,
			.module_id = events[e].module,
		};
		if (ev.kind == HP_MOD_LOAD) {
			ev.path = hp_rec_str_of(paths + m->path);
			ev.build_id = (struct hp_rec_str){(const char *)m->build_id, m->build_id_len};
			ev.bias = m->bias;
			ev.segment_count = m->nseg;
		}
		hp_rec_module_event_put(b, &ev);
		for (uint32_t s = 0; ev.kind == HP_MOD_LOAD && s < m->nseg; s++)
			hp_rec_segment_put(b, &m->seg[s]);
	}
}

int hp_modules_trylock(void)
{
	return hp_spin_trylock(&lock);
}

void hp_modules_lock(void)
{
	hp_spin_lock(&lock);
}

void hp_modules_unlock(void)
{
	hp_spin_unlock(&lock);
}
