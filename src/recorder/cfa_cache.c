/*
 * cfa_cache.c - the per-thread DWARF rule cache (see cfa_cache.h).
 *
 * Model. libunwind's unw_backtrace (1.6, x86_64/Gtrace.c) walks a stack
 * with a per-thread table of frame rules keyed by the lookup address (the
 * return address minus one): a "standard" frame has CFA = rsp|rbp + k,
 * the return address at CFA - 8 and rbp at CFA + j or unchanged, and is
 * stepped as rip = [CFA - 8], rbp = [CFA + j], rsp = CFA; a frame whose
 * step returned 0 (the return address or rbp undefined: _start, a
 * thread's clone) ends the walk; a return address below 0x4000 ends it
 * too; anything else sends libunwind to its slow unw_step loop. Its table
 * is a 256 KiB open-addressing hash, probed with a multiply: most of the
 * ~90 instructions a frame costs there.
 *
 * Here the same rules sit in a set-associative table (sets of 2 ways, 16
 * bytes an entry: 16 KiB a thread at first, growing to at most 1 MiB when
 * the thread's walks need more rules, below; and 44 KiB of remembered
 * walks next to it, touched as they fill), filled on a miss by reading
 * the frame's FDE through .eh_frame_hdr and running its CFA program up to
 * the lookup address, exactly as libunwind's parser does (Gparser.c:
 * run_cfi_program, apply_reg_state; Gstash_frame.c for what is
 * "standard"). A rule this parser cannot prove to be what libunwind would
 * find (no .eh_frame_hdr or no FDE, a signal frame, an expression, a
 * register above 16, a remember/restore stack deeper than ours, ...) is
 * cached as "libunwind": a walk that meets one is abandoned and redone by
 * unw_backtrace, so every stack recorded is one libunwind gives.
 *
 * Next to the rules, the thread's last walks are remembered with the
 * words each read (struct memo): a walk equal to one is not stepped again.
 *
 * Memory a thread: struct table (61,504 bytes: the first 1,024 rules,
 * the remembered walks) and, once grown, one mapping of rules (64 KiB,
 * 256 KiB or 1 MiB), all from hp_os_map, never the program's allocator;
 * pages are backed as they are touched; both are unmapped at the
 * thread's exit (table_release).
 *
 * Invariants: an entry's ret is 0 (empty) or a return address, its rule
 * that of the lookup address ret - 1, which depends only on the code
 * mapped there, so entries stay valid
 * until a dlclose (hp_cfa_flush bumps the generation; each thread clears
 * its own table at its next walk). Each table is read and written only by
 * its own thread, inside the recorder (t->busy set), so it needs no lock.
 * Frames are read only inside the thread's stack bounds; a walk that would
 * read outside them goes to libunwind.
 */
#include "cfa_cache.h"

#include <errno.h>

#include <elf.h>
#include <stddef.h>
#include <link.h>
#include <string.h>

#include "../common/hash.h"
#include "os.h"
#include "roots.h"
#include "unwind.h"

static void table_release(void *table);

/*
 * The rules: sets of WAYS entries chosen by set_of(ret) & mask. A table
 * starts with FIRST_SETS sets (16 KiB, inside struct table) and grows
 * fourfold, into a mapping of its own, when the thread's walks keep
 * evicting rules they need again (grow_due): a big program returns
 * through more addresses than the first sets hold (gcc's cc1 compiling C,
 * 5,415; clang, 11,734), and a rule evicted and needed again is read from
 * .eh_frame again (a dl_iterate_phdr, a binary search, a CFA program:
 * about 1,300 instructions). It stops at MAX_SETS: 64 Ki rules, 1 MiB.
 */
#define WAYS 2
#define FIRST_SETS 512           /* a power of two */
#define MAX_SETS (32768u)        /* a power of two: 1 MiB of rules */
#define GROW_EVICTIONS 256       /* evictions a window counts before it decides */
#define GROW_WALKS_PER_EVICTION 32 /* fewer stepped walks an eviction: grow */

/* What an entry says of its frame (libunwind's frame types, as its fast
 * trace uses them). */
enum {
	RULE_STEP_RSP = 0, /* CFA = rsp + cfa_off */
	RULE_STEP_RBP = 1, /* CFA = rbp + cfa_off */
	RULE_LAST = 2,     /* the walk ends here */
	RULE_LIBUNWIND = 3 /* left to unw_backtrace */
};
#define RBP_KEPT INT16_MIN /* rbp_off: rbp unchanged by the frame */

/* libunwind's fast trace stops below this return address (Gtrace.c). */
#define LOWEST_RIP 0x4000

/* 16 bytes. The rule's fields are read straight from memory, no decoding:
 * rbp at CFA + rbp_off unless it is RBP_KEPT (an offset libunwind allows
 * is below 2^14 in magnitude), the return address at CFA - 8. */
struct rule {
	uint64_t ret; /* the return address (rule of ret - 1), 0 = empty */
	int32_t cfa_off;
	int16_t rbp_off;
	uint8_t kind;
	uint8_t unused;
};

/*
 * Remembered walks. A walk is a pure function of its starting registers
 * (rip, rsp, rbp), of the words of the stack it reads and of the table's
 * rules, which stay until a flush: when a later walk starts with the same
 * registers and every word a remembered walk read still holds the value
 * it read, the walk would read the same words again, apply the same rules
 * and give the same frames. Matching the starting registers alone is not
 * enough: two callers with frames of one size reach the same inner frames
 * at the same rsp, and only a word further up (a return address into one
 * caller or the other) tells their walks apart; so every word is
 * compared: first the one that told the last other walk apart (disc),
 * then all, the outermost first (where such walks differ).
 *
 * With an entry (the program's rsp where it called the recorder), the
 * walk is remembered from there: its key is the program's return address
 * and rsp, and the recorder's own frames, always the same for a call
 * site of malloc, are not among its words (the program's rbp, saved by
 * the recorder's outermost frame, is one when a step uses it). The walk
 * still steps through those frames when it is not remembered, and
 * checks it ends them where the entry says.
 *
 * MEMO_SETS sets of MEMO_WAYS, chosen by rsp (the depth of the call):
 * the callers reaching one depth share a set. A walk that read more than
 * MEMO_READS words is not remembered. Words are stored as their offsets
 * in words from a base (the walk's starting rsp, or with an entry the
 * word below the return address below it; 16 bits: a walk that reads a
 * word below the base, unaligned or 512 KiB or more above it is not
 * remembered; two bytes an offset keep a remembered walk in fewer cache
 * lines), and the frames a walk kept are the words marked in kept, in
 * order, after the key's return address when lead is set.
 */
#define MEMO_SETS 16 /* a power of two */
#define MEMO_WAYS 4
#define MEMO_READS 64 /* bits of kept */
#define MEMO_POISON (MEMO_READS + 1) /* reads of a walk that cannot be remembered */
#define MEMO_MAX_OFF 0xffffu         /* words */

/* A cache line each for what a look reads first: the first line holds
 * the key and the word that told the last other walk apart (disc: its
 * offset and value copied there), so that a way whose key or disc word
 * differs costs that line alone, and the head, which a hit reads. */
struct memo {
	struct hp_cfa_memo_head h; /* stack, origin, bucket (cfa_cache.h) */
	uintptr_t rsp;             /* the starting registers (or the program's) */
	uint64_t disc_val;         /* val[disc] */
	uintptr_t rip, rbp;
	uint32_t max;      /* the walk's max */
	uint16_t disc_off; /* off[disc] */
	uint8_t lead;      /* 1: the first frame is rip, read before the words */
	uint8_t disc;      /* the word that last told another walk apart */
	uint32_t reads;    /* words read; 0 = empty */
	uint16_t n;        /* frames kept */
	uint64_t hash;     /* of the kept frames */
	uint64_t kept;     /* bit i: word i is a kept frame */
	uint16_t off[MEMO_READS]; /* word i at base + 8 * off[i] (base: rsp, or rsp - 16) */
	/* its value; aligned so that hp_cfa_walk_fp's pairs (words 2j and
	 * 2j + 1) are one 16-byte vector each (recall_fp) */
	uint64_t val[MEMO_READS] __attribute__((aligned(16)));
} __attribute__((aligned(64)));
_Static_assert(offsetof(struct memo, disc) < 64, "a memo's key and disc word in its first line");

/* Makes word i of m the one its looks compare first. */
static inline void set_disc(struct memo *m, uint32_t i)
{
	m->disc = (uint8_t)i;
	m->disc_off = m->off[i];
	m->disc_val = m->val[i];
}

struct table {
	struct rule *rules; /* (mask + 1) * WAYS entries: first, or a mapping */
	uintptr_t mask;      /* sets - 1 */
	/* The window grow_due judges: evictions of a rule and walks that
	 * stepped (were not remembered) since the table last grew, was
	 * emptied or judged; rules read from .eh_frame by this thread. */
	uint32_t evictions, stepped;
	uint64_t reads;
	struct memo memo[MEMO_SETS][MEMO_WAYS];
	uint8_t memo_next[MEMO_SETS]; /* the way a set fills next */
	struct rule first[FIRST_SETS][WAYS] __attribute__((aligned(64)));
};

/* Rules read from .eh_frame, and the largest table any thread grew, in
 * rules: all threads, relaxed atomics (for HEAPPROF_UNWIND_CHECK's line). */
static uint64_t rules_read, rules_largest = FIRST_SETS * WAYS;

/* The words a walk reads, as struct memo keeps them: hp_cfa_walk notes
 * them in its own frame, at addresses the compiler needs no register for
 * (noted into the memo itself, each note recomputed the memo's address:
 * 14 instructions a word), and copies them into the memo only when it
 * remembers the walk. */
struct notes {
	uint16_t off[MEMO_READS];
	uint64_t val[MEMO_READS];
};

/* Notes the word val read at at into off[] and val[] (a memo's, or a
 * walk's struct notes), base the walk's starting rsp (reads past
 * MEMO_READS are counted only, and a word no offset can say poisons the
 * memo: such a walk is not remembered). Async-signal-safe, no allocation,
 * no lock. */
static inline __attribute__((always_inline)) void note(uint16_t *off, uint64_t *vals,
						       uint32_t *reads, uintptr_t base,
						       uintptr_t at, uint64_t val)
{
	uint32_t i = (*reads)++;
	uintptr_t d = at - base;

	if (i < MEMO_READS) {
		if (__builtin_expect(d > (uintptr_t)MEMO_MAX_OFF * 8 || (d & 7), 0)) {
			*reads = MEMO_POISON;
			return;
		}
		off[i] = (uint16_t)(d >> 3);
		vals[i] = val;
	}
}

/* note() into the memo tr itself, for hp_cfa_walk_fp (whose loop keeps
 * few values: its memo's address stays in a register). Async-signal-safe,
 * no allocation, no lock. */
static inline __attribute__((always_inline)) void note_memo(struct memo *tr, uintptr_t base,
							    uintptr_t at, uint64_t val)
{
	uint32_t i = tr->reads++;
	uintptr_t d = at - base;

	if (i < MEMO_READS) {
		if (__builtin_expect(d > (uintptr_t)MEMO_MAX_OFF * 8 || (d & 7), 0)) {
			tr->reads = MEMO_POISON;
			return;
		}
		tr->off[i] = (uint16_t)(d >> 3);
		tr->val[i] = val;
	}
}

/* Bumped by hp_cfa_flush (any thread, relaxed); a thread whose
 * t->cfa_generation differs clears its table before walking. */
static uint32_t generation;

/* t->cfa_cache once the thread may no longer have a table: its exit
 * destructor ran, or its table could not be mapped. */
#define NO_TABLE ((void *)1)

/* The key whose destructor unmaps a thread's table at its exit; set once
 * by hp_cfa_init, read-only afterwards. A pthread key rather than
 * __cxa_thread_atexit_impl, which allocates (a block the recorder would
 * then see freed unrecorded at the thread's exit). */
static unsigned table_key;
static int have_key;

int hp_cfa_init(void)
{
	int r = hp_os_thread_key_create(&table_key, table_release);

	have_key = r == 0;
	return r;
}

void hp_cfa_rule_stats(uint64_t *read, uint64_t *largest)
{
	*read = __atomic_load_n(&rules_read, __ATOMIC_RELAXED);
	*largest = __atomic_load_n(&rules_largest, __ATOMIC_RELAXED);
}

void hp_cfa_flush(void)
{
	__atomic_fetch_add(&generation, 1, __ATOMIC_RELAXED);
}

static inline uintptr_t set_of(uint64_t ret, uintptr_t mask)
{
	/* Return addresses differ in their low bits; fold in higher ones so
	 * that code at the same offset in two pages does not share a set. */
	return (uintptr_t)(ret ^ (ret >> 9)) & mask;
}

/* ---- reading .eh_frame ---------------------------------------------- */

/* A cursor over bytes of a loaded object; every read checks end. */
struct cur {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t get_n(struct cur *c, unsigned n)
{
	uint64_t v = 0;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->p, n); /* little-endian */
	c->p += n;
	return v;
}

static uint64_t get_uleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		b = (uint8_t)get_n(c, 1);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	return v;
}

static int64_t get_sleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		b = (uint8_t)get_n(c, 1);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A DW_EH_PE_* encoded pointer: absolute or pc-relative (the base is the
 * field's own address), as libunwind reads FDE addresses. The indirect
 * bit is ignored (only a personality routine, skipped, has it). Anything
 * else marks the cursor bad. */
static uint64_t get_encoded(struct cur *c, uint8_t enc)
{
	uintptr_t at = (uintptr_t)c->p;
	uint64_t v;

	switch (enc & 0x0f) {
	case 0x00: v = get_n(c, 8); break;
	case 0x01: v = get_uleb(c); break;
	case 0x02: v = get_n(c, 2); break;
	case 0x03: v = get_n(c, 4); break;
	case 0x04: v = get_n(c, 8); break;
	case 0x09: v = (uint64_t)get_sleb(c); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)get_n(c, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)get_n(c, 4); break;
	case 0x0c: v = get_n(c, 8); break;
	default: c->bad = 1; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += at; break;
	default: c->bad = 1; return 0;
	}
	return v;
}

/* The rules the walk needs, as libunwind's parser would hold them. */
enum { R_SAME, R_UNDEF, R_OFFSET, R_OTHER };
enum { S_RBP, S_RSP, S_RA, SLOTS };
#define DW_RBP 6
#define DW_RSP 7
#define DW_RA 16
#define DW_MAX_REG 16 /* libunwind's DWARF_NUM_PRESERVED_REGS - 1 */

struct state {
	uint64_t cfa_reg;
	int64_t cfa_off;
	uint8_t kind[SLOTS];
	int64_t off[SLOTS];
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;
	uint8_t has_z;   /* FDEs carry augmentation data */
	struct cur init; /* its initial instructions */
};

static int slot_of(uint64_t reg)
{
	return reg == DW_RBP ? S_RBP : reg == DW_RSP ? S_RSP : reg == DW_RA ? S_RA : -1;
}

/* Sets reg's rule (a register the walk does not follow is ignored). */
static void set_rule(struct state *s, uint64_t reg, uint8_t kind, int64_t off)
{
	int i = slot_of(reg);

	if (i >= 0) {
		s->kind[i] = kind;
		s->off[i] = off;
	}
}

#define STACK_DEPTH 8 /* remember_state nesting; deeper goes to libunwind */

/* Runs a CFA program from location loc while loc <= ip (libunwind's
 * run_cfi_program: "up to and including" ip). init holds the rules after
 * the CIE's instructions, for DW_CFA_restore. Returns 0, or -1 for what
 * only libunwind may interpret. */
static int run(struct cur *c, uint64_t loc, uint64_t ip, const struct cie *cie, struct state *s,
	       const struct state *init)
{
	struct state stack[STACK_DEPTH];
	unsigned depth = 0;
	uint64_t reg, reg2;
	int64_t off;
	uint8_t op;

	while (c->p < c->end && loc <= ip) {
		op = (uint8_t)get_n(c, 1);
		switch (op >> 6) {
		case 1: /* DW_CFA_advance_loc */
			loc += (op & 0x3f) * cie->code_align;
			continue;
		case 2: /* DW_CFA_offset */
			reg = op & 0x3f;
			off = (int64_t)get_uleb(c) * cie->data_align;
			if (reg > DW_MAX_REG)
				return -1;
			set_rule(s, reg, R_OFFSET, off);
			continue;
		case 3: /* DW_CFA_restore */
			reg = op & 0x3f;
			if (reg > DW_MAX_REG)
				return -1;
			if (slot_of(reg) >= 0)
				set_rule(s, reg, init->kind[slot_of(reg)], init->off[slot_of(reg)]);
			continue;
		}
		switch (op) {
		case 0x00: /* DW_CFA_nop */
			break;
		case 0x02: /* DW_CFA_advance_loc1 */
			loc += get_n(c, 1) * cie->code_align;
			break;
		case 0x03: /* DW_CFA_advance_loc2 */
			loc += get_n(c, 2) * cie->code_align;
			break;
		case 0x04: /* DW_CFA_advance_loc4 */
			loc += get_n(c, 4) * cie->code_align;
			break;
		case 0x05: /* DW_CFA_offset_extended */
		case 0x11: /* DW_CFA_offset_extended_sf */
			reg = get_uleb(c);
			off = op == 0x05 ? (int64_t)get_uleb(c) : get_sleb(c);
			if (reg > DW_MAX_REG)
				return -1;
			set_rule(s, reg, R_OFFSET, off * cie->data_align);
			break;
		case 0x06: /* DW_CFA_restore_extended */
			reg = get_uleb(c);
			if (reg > DW_MAX_REG)
				return -1;
			if (slot_of(reg) >= 0)
				set_rule(s, reg, init->kind[slot_of(reg)], init->off[slot_of(reg)]);
			break;
		case 0x07: /* DW_CFA_undefined */
		case 0x08: /* DW_CFA_same_value */
			reg = get_uleb(c);
			if (reg > DW_MAX_REG)
				return -1;
			set_rule(s, reg, op == 0x07 ? R_UNDEF : R_SAME, 0);
			break;
		case 0x09: /* DW_CFA_register */
			reg = get_uleb(c);
			reg2 = get_uleb(c);
			if (reg > DW_MAX_REG || reg2 > DW_MAX_REG)
				return -1;
			set_rule(s, reg, R_OTHER, 0);
			break;
		case 0x0a: /* DW_CFA_remember_state */
			if (depth == STACK_DEPTH)
				return -1;
			stack[depth++] = *s;
			break;
		case 0x0b: /* DW_CFA_restore_state */
			if (!depth)
				return -1;
			*s = stack[--depth];
			break;
		case 0x0c: /* DW_CFA_def_cfa */
			s->cfa_reg = get_uleb(c);
			s->cfa_off = (int64_t)get_uleb(c);
			break;
		case 0x12: /* DW_CFA_def_cfa_sf */
			s->cfa_reg = get_uleb(c);
			s->cfa_off = get_sleb(c) * cie->data_align;
			break;
		case 0x0d: /* DW_CFA_def_cfa_register */
			s->cfa_reg = get_uleb(c);
			break;
		case 0x0e: /* DW_CFA_def_cfa_offset */
			s->cfa_off = (int64_t)get_uleb(c);
			break;
		case 0x13: /* DW_CFA_def_cfa_offset_sf */
			s->cfa_off = get_sleb(c) * cie->data_align;
			break;
		case 0x2e: /* DW_CFA_GNU_args_size: no rule */
			get_uleb(c);
			break;
		default: /* set_loc, expressions, val_*, vendor ops */
			return -1;
		}
	}
	return c->bad ? -1 : 0;
}

/* Reads the CIE at p. Returns 0, or -1 for what is left to libunwind (a
 * signal frame's 'S', unknown augmentations, a 64-bit length). */
static int read_cie(const uint8_t *p, struct cie *cie)
{
	struct cur c = {p, p + 8, 0};
	uint64_t len = get_n(&c, 4), id, ra;
	const char *aug;
	uint8_t version;

	if (len == 0 || len >= 0xfffffff0u)
		return -1;
	c.end = p + 4 + len;
	id = get_n(&c, 4);
	version = (uint8_t)get_n(&c, 1);
	if (c.bad || id != 0 || (version != 1 && version != 3))
		return -1;
	aug = (const char *)c.p;
	while (c.p < c.end && *c.p)
		c.p++;
	if (c.p++ >= c.end)
		return -1;
	cie->code_align = get_uleb(&c);
	cie->data_align = get_sleb(&c);
	ra = version == 1 ? get_n(&c, 1) : get_uleb(&c);
	cie->fde_enc = 0; /* DW_EH_PE_absptr */
	cie->has_z = aug[0] == 'z';
	if (ra != DW_RA)
		return -1;
	if (aug[0] == 'z') {
		uint64_t size = get_uleb(&c);
		struct cur a = {c.p, c.p + size, 0};

		if (c.bad || size > (uint64_t)(c.end - c.p))
			return -1;
		for (const char *q = aug + 1; *q; q++) {
			if (*q == 'R') {
				cie->fde_enc = (uint8_t)get_n(&a, 1);
			} else if (*q == 'L') {
				get_n(&a, 1);
			} else if (*q == 'P') {
				uint8_t enc = (uint8_t)get_n(&a, 1);
				get_encoded(&a, enc);
			} else {
				return -1; /* 'S' (a signal frame) or unknown */
			}
		}
		if (a.bad)
			return -1;
		c.p += size;
	} else if (aug[0]) {
		return -1;
	}
	if (c.bad)
		return -1;
	cie->init = c;
	return 0;
}

/* The rule for lookup address ip, whose FDE is at p, into e: what
 * libunwind's trace_init_addr would make of it. */
static void rule_from_fde(const uint8_t *p, uint64_t ip, struct rule *e)
{
	struct cur c = {p, p + 8, 0};
	uint64_t len = get_n(&c, 4), cie_off, start, range;
	const uint8_t *cie_at;
	struct state s, init;
	struct cie cie;
	int64_t rbp_off;

	if (len == 0 || len >= 0xfffffff0u)
		return;
	c.end = p + 4 + len;
	cie_at = c.p;
	cie_off = get_n(&c, 4);
	if (c.bad || cie_off == 0)
		return;
	cie_at -= cie_off;
	if (read_cie(cie_at, &cie) < 0)
		return;
	start = get_encoded(&c, cie.fde_enc);
	range = get_encoded(&c, cie.fde_enc & 0x0f);
	if (c.bad || ip < start || ip - start >= range)
		return;
	if (cie.has_z) { /* the FDE's augmentation data: skipped */
		uint64_t size = get_uleb(&c);

		if (c.bad || size > (uint64_t)(c.end - c.p))
			return;
		c.p += size;
	}
	/* Every rule starts as "same value" (libunwind's parser), the CFA
	 * undefined until the CIE defines it. */
	memset(&s, 0, sizeof s);
	s.cfa_reg = ~(uint64_t)0;
	if (run(&cie.init, 0, ~(uint64_t)0, &cie, &s, &s) < 0)
		return;
	init = s;
	if (run(&c, start, ip, &cie, &s, &init) < 0)
		return;

	/* libunwind computes the CFA from rsp or rbp only (the other
	 * registers have no location in its fast trace's cursor). */
	if (s.cfa_reg != DW_RSP && s.cfa_reg != DW_RBP)
		return;
	/* apply_reg_state: an undefined return address ends the walk (unw_step
	 * returns 0); so does an undefined rbp once the step succeeded
	 * (x86_64 unw_step), which needs the return address readable. */
	if (s.kind[S_RA] == R_UNDEF) {
		e->kind = RULE_LAST;
		return;
	}
	if (s.kind[S_RA] != R_OFFSET)
		return;
	if (s.kind[S_RBP] == R_UNDEF) {
		e->kind = RULE_LAST;
		return;
	}
	/* Gstash_frame.c: a standard frame. */
	if (s.off[S_RA] != -8 || s.cfa_off <= -(1 << 28) || s.cfa_off >= (1 << 28))
		return;
	if (s.kind[S_RSP] != R_SAME && s.kind[S_RSP] != R_UNDEF)
		return; /* allowed there, but never seen: not cached */
	if (s.kind[S_RBP] == R_OFFSET) {
		rbp_off = s.off[S_RBP];
		if (rbp_off <= -(1 << 14) || rbp_off >= (1 << 14) || rbp_off == -1)
			return;
		e->rbp_off = (int16_t)rbp_off;
	} else if (s.kind[S_RBP] == R_SAME) {
		e->rbp_off = RBP_KEPT;
	} else {
		return;
	}
	/* A CFA of rsp + 0 would leave ip and cfa unchanged when the
	 * return address repeats: libunwind rejects that step. */
	if (s.cfa_reg == DW_RSP && s.cfa_off == 0)
		return;
	e->cfa_off = (int32_t)s.cfa_off;
	e->kind = s.cfa_reg == DW_RSP ? RULE_STEP_RSP : RULE_STEP_RBP;
}

/* The rule for ip in the object of .eh_frame_hdr hdr, found as libunwind
 * finds it: the last table entry starting at or below ip. */
static void rule_from_hdr(const uint8_t *hdr, uint64_t ip, struct rule *e)
{
	struct cur c = {hdr, hdr + 4, 0};
	uint8_t version = (uint8_t)get_n(&c, 1), ptr_enc = (uint8_t)get_n(&c, 1);
	uint8_t count_enc = (uint8_t)get_n(&c, 1), table_enc = (uint8_t)get_n(&c, 1);
	const int32_t *table;
	uint64_t count, lo = 0, hi, mid;

	if (version != 1 || table_enc != 0x3b) /* datarel | sdata4 */
		return;
	c.end = hdr + 4 + 16;
	get_encoded(&c, ptr_enc);
	count = get_encoded(&c, count_enc);
	if (c.bad)
		return;
	table = (const int32_t *)c.p;
	hi = count;
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (ip < (uint64_t)(uintptr_t)(hdr + table[2 * mid]))
			hi = mid;
		else
			lo = mid + 1;
	}
	if (!hi)
		return;
	rule_from_fde(hdr + table[2 * (hi - 1) + 1], ip, e);
}

struct find {
	uint64_t ip;
	struct rule *e;
};

/* dl_iterate_phdr callback: the object with a PT_LOAD holding f->ip, as
 * libunwind's dwarf_callback finds it. The loader's lock is held, so the
 * object cannot be unmapped while its .eh_frame is read. */
static int find_rule(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;
	const uint8_t *hdr = NULL;
	int found = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && f->ip >= lo && f->ip < lo + ph->p_memsz)
			found = 1;
		else if (ph->p_type == PT_GNU_EH_FRAME)
			hdr = (const uint8_t *)lo;
	}
	if (!found)
		return 0;
	if (hdr)
		rule_from_hdr(hdr, f->ip, f->e);
	return 1;
}

/* Moves the rules into a table of four times as many sets, mapped for
 * them. A rule of set i goes to a set j with j & mask == i (set_of keeps
 * the low bits), so each new set receives the rules of one old set, its
 * two at most: none is lost, and the newer (way 0) stays in way 0.
 * Returns 0, or -1 when the mapping failed (the table keeps its size).
 * Called by fill only, inside a walk (t->busy set): a signal handler that
 * allocates meanwhile is not recorded and never walks, so no walk sees
 * the table half moved. Allocates (hp_os_map), no lock. */
static __attribute__((noinline, cold)) int grow_rules(struct table *tab)
{
	const uintptr_t sets = tab->mask + 1, to_sets = sets * 4;
	struct rule *from = tab->rules, *to = hp_os_map(to_sets * WAYS * sizeof *to);
	uint64_t largest = __atomic_load_n(&rules_largest, __ATOMIC_RELAXED);

	if (!to)
		return -1;
	for (uintptr_t i = 0; i < sets; i++) {
		for (int w = 0; w < WAYS; w++) {
			const struct rule *e = &from[i * WAYS + (uintptr_t)w];
			struct rule *set;

			if (!e->ret)
				continue;
			set = &to[set_of(e->ret, to_sets - 1) * WAYS];
			set[set[0].ret ? 1 : 0] = *e;
		}
	}
	tab->rules = to;
	tab->mask = to_sets - 1;
	if (from != &tab->first[0][0])
		hp_os_unmap(from, sets * WAYS * sizeof *from);
	while (largest < to_sets * WAYS &&
	       !__atomic_compare_exchange_n(&rules_largest, &largest, to_sets * WAYS, 0,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return 0;
}

/* Fills the set's first way with ret's rule, the older entry moving to
 * the second (the one evicted). Counts an eviction in the table's window;
 * when the window has counted GROW_EVICTIONS of them in fewer than
 * GROW_WALKS_PER_EVICTION stepped walks each (a rule read again at least
 * every 32 walks, about 40 instructions a walk), the table grows (up to
 * MAX_SETS), else a new window starts. Returns the new entry, in
 * tab->rules as it is on return. Called with t->busy set: takes the
 * loader's lock (dl_iterate_phdr), may map memory (grow_rules); not
 * async-signal-safe. */
static __attribute__((noinline, cold)) const struct rule *fill(struct table *tab,
							       struct rule *set, uint64_t ret)
{
	struct rule e = {.ret = ret, .kind = RULE_LIBUNWIND};
	struct find f = {ret - 1, &e};

	hp_os_dl_iterate(find_rule, &f);
	tab->reads++;
	__atomic_fetch_add(&rules_read, 1, __ATOMIC_RELAXED);
	if (set[1].ret && ++tab->evictions >= GROW_EVICTIONS) {
		if (tab->stepped < GROW_EVICTIONS * GROW_WALKS_PER_EVICTION &&
		    tab->mask + 1 < MAX_SETS && grow_rules(tab) == 0)
			set = &tab->rules[set_of(ret, tab->mask) * WAYS];
		tab->evictions = 0;
		tab->stepped = 0;
	}
	set[1] = set[0];
	set[0] = e;
	return &set[0];
}

/* Empties the rules (every set of the table as it is: a table that grew
 * keeps its size) and starts a new window. Inside a walk (t->busy set);
 * no allocation, no lock. */
static void clear_rules(struct table *tab)
{
	memset(tab->rules, 0, (tab->mask + 1) * WAYS * sizeof *tab->rules);
	tab->evictions = 0;
	tab->stepped = 0;
}

/* Gives t an empty table of the current generation. Returns 0, or -1
 * when the thread has none (could not map one, or its exit destructor has
 * run). errno kept (pthread_setspecific may allocate): the common
 * allocation path does not save it. */
static int prepare_table(struct hp_thread *t);
static __attribute__((noinline, cold)) int prepare(struct hp_thread *t)
{
	int saved = errno, r = prepare_table(t);

	errno = saved;
	return r;
}

static int prepare_table(struct hp_thread *t)
{
	struct table *tab = t->cfa_cache;
	uint32_t gen = __atomic_load_n(&generation, __ATOMIC_RELAXED);
	int r;

	if (tab == NO_TABLE)
		return -1;
	if (!tab) {
		tab = have_key ? hp_os_map(sizeof *tab) : NULL;
		if (!tab) {
			t->cfa_cache = NO_TABLE;
			return -1;
		}
		tab->rules = &tab->first[0][0];
		tab->mask = FIRST_SETS - 1;
		t->forwarding++; /* not the program's, if glibc allocates */
		r = hp_os_thread_key_set(table_key, tab);
		t->forwarding--;
		if (r < 0) { /* a table per thread, never unmapped: no */
			hp_os_unmap(tab, sizeof *tab);
			t->cfa_cache = NO_TABLE;
			return -1;
		}
		t->cfa_cache = tab;
	} else {
		/* The rules, and the remembered walks without writing to
		 * those never filled (pages not touched stay unbacked): an
		 * empty one has rsp 0 (recall compares nothing else). */
		clear_rules(tab);
		for (unsigned i = 0; i < MEMO_SETS; i++)
			for (unsigned w = 0; w < MEMO_WAYS; w++)
				if (tab->memo[i][w].reads || tab->memo[i][w].rsp) {
					tab->memo[i][w].reads = 0;
					tab->memo[i][w].rsp = 0;
				}
	}
	t->cfa_generation = gen;
	return 0;
}

/* The thread-exit destructor of a table: the thread walks with libunwind
 * from now on (other destructors may still allocate). The thread's
 * pointers to the table are cleared before it is unmapped, with a signal
 * fence between: a signal handler that allocates on this thread, at any
 * instruction of this function, finds either the whole table or none.
 * Async-signal-safe; no allocation, no lock. */
static void table_release(void *table)
{
	struct table *tab = table;
	struct rule *rules = tab->rules;
	size_t rules_bytes = (tab->mask + 1) * WAYS * sizeof *rules;

	hp_self.cfa_memo = NULL;
	hp_self.cfa_cache = NO_TABLE;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (rules != &tab->first[0][0])
		hp_os_unmap(rules, rules_bytes);
	hp_os_unmap(table, sizeof(struct table));
}

/* One step of libunwind's fast trace from the frame whose return address
 * is *rip: 0 with *rip, *rsp, *rbp those of the caller's frame; 1 when
 * the walk ends here (the last frame); -1 when libunwind must walk. The
 * words read are noted into nt. *rules and *mask are tab's, reloaded
 * after a miss (fill may grow the table). Lock-free and allocation-free
 * on a hit; a miss is fill's (the loader's lock, hp_os_map). */
static inline __attribute__((always_inline)) int step(struct table *tab, struct rule **rules,
						      uintptr_t *mask, uintptr_t lo,
						      uintptr_t span, uintptr_t base, uintptr_t *rip,
						      uintptr_t *rsp, uintptr_t *rbp,
						      struct notes *nt, uint32_t *reads,
						      uintptr_t *rbp_at)
{
	struct rule *set = *rules + set_of(*rip, *mask) * WAYS;
	const struct rule *e;
	uintptr_t cfa;

	if (__builtin_expect(set[0].ret == *rip, 1)) {
		e = &set[0];
	} else if (set[1].ret == *rip) {
		e = &set[1];
	} else {
		e = fill(tab, set, *rip);
		*rules = tab->rules; /* (the table may have grown) */
		*mask = tab->mask;
	}
	if (__builtin_expect(e->kind > RULE_STEP_RBP, 0))
		return e->kind == RULE_LAST ? 1 : -1;
	if (e->kind == RULE_STEP_RBP && *rbp_at) {
		/* The walk depends on a saved rbp only from here */
		note(nt->off, nt->val, reads, base, *rbp_at, *rbp);
		*rbp_at = 0;
	}
	cfa = (e->kind ? *rbp : *rsp) + (uintptr_t)(intptr_t)e->cfa_off;
	/* lo + 8 <= cfa <= hi, in one compare */
	if (__builtin_expect(cfa - lo - 8 > span, 0))
		return -1;
	*rip = ((const uintptr_t *)cfa)[-1];
	note(nt->off, nt->val, reads, base, cfa - 8, *rip);
	if (e->rbp_off != RBP_KEPT) {
		uintptr_t at = cfa + (uintptr_t)(intptr_t)e->rbp_off;

		if (at - lo > span)
			return -1;
		*rbp = *(const uintptr_t *)at;
		*rbp_at = at; /* noted when a later step uses it */
	}
	*rsp = cfa;
	return 0;
}

/* The stack word at offset off from lo. */
#define WORD(base, off) (*(const uint64_t *)((base) + 8 * (uintptr_t)(off)))

/* The word of m that differs from the stack at base, the outermost such
 * first (where two callers' walks differ); 0 when none does (a word the
 * memo holds, as disc must be). For the rare miss of recall and recall_fp
 * after their first compare. */
static __attribute__((noinline, cold)) uint32_t differing_word(const struct memo *m,
							     uintptr_t base)
{
	for (uint32_t k = m->reads; k--;)
		if (WORD(base, m->off[k]) != m->val[k])
			return k;
	return 0;
}

/* The remembered walk of set from (rip, rsp, rbp) for max whose every
 * word still holds what it read: its frames into frames[] and their hash
 * into *hash. Returns their number, or -1 when none is. */
static inline __attribute__((always_inline)) int recall(struct hp_thread *t, struct table *tab,
							uint32_t set, uintptr_t base, uintptr_t rip,
							uintptr_t rsp, uintptr_t rbp, uint32_t max,
							uint64_t *frames, uint64_t *hash,
							uint32_t *stack)
{
	struct memo *m = tab->memo[set];
	uint32_t n;
	uint64_t kept, d;
	size_t k;

	for (unsigned w = 0; w < MEMO_WAYS; w++, m++) {
		/* The key's rsp (an empty memo's is 0: no walk's), then the
		 * word that told the last walk other than this one apart:
		 * callers at one depth (one set) share the whole key, tell
		 * apart at one word, and a walk of one of them is rejected by
		 * the others' memos at one compare instead of at the outer
		 * words'. That word is read before the rest of the key is
		 * compared: it lies at base (a function of rsp, less 16 with
		 * an entry) plus an offset a walk from this rsp read in this
		 * thread's stack, between base and that word then, so it is
		 * in the stack still. Then the rest of the key, in one
		 * branch. */
		if (m->rsp != rsp || WORD(base, m->disc_off) != m->disc_val)
			continue;
		if ((m->rip ^ rip) | (m->rbp ^ rbp) | (m->max ^ max))
			continue;
		/* Then every word, their differences or'ed together four at
		 * a time and tested once at the end: the loop is most of a
		 * remembered walk's cost, and this is its cheapest form
		 * (docs/internals/recorder.md, "Remembered walks"). The
		 * words lie between base and the outermost, which the
		 * compare read first before (a stack is one mapping there). */
		d = 0;
		k = m->reads & ~(size_t)7;
#define DIFF(i) (WORD(base, m->off[k + (i)]) ^ m->val[k + (i)])
		/* From the top: reads % 8 first (words k .. reads - 1),
		 * entering the round part way (Duff's device), then 8 a round
		 * (4 a round and a loop for the last reads % 4 took 4.75 and
		 * 6 instructions a word). */
		switch (m->reads & 7) {
		case 0:
			while (k) {
				k -= 8;
				d |= DIFF(7);
				__attribute__((fallthrough));
			case 7:
				d |= DIFF(6);
				__attribute__((fallthrough));
			case 6:
				d |= DIFF(5);
				__attribute__((fallthrough));
			case 5:
				d |= DIFF(4);
				__attribute__((fallthrough));
			case 4:
				d |= DIFF(3);
				__attribute__((fallthrough));
			case 3:
				d |= DIFF(2);
				__attribute__((fallthrough));
			case 2:
				d |= DIFF(1);
				__attribute__((fallthrough));
			case 1:
				d |= DIFF(0);
			}
		}
#undef DIFF
		if (__builtin_expect(d != 0, 0))
			goto differs;
		t->cfa_memo = m;
		*hash = m->hash;
		if (stack && m->h.stack) { /* interned already: no frames needed */
			*stack = m->h.stack;
			return (int)m->n;
		}
		n = 0;
		if (m->lead)
			frames[n++] = m->rip;
		for (kept = m->kept; kept; kept &= kept - 1)
			frames[n++] = m->val[__builtin_ctzll(kept)];
		return (int)n;
differs:
		set_disc(m, differing_word(m, base));
	}
	return -1;
}

/* Two stack words, as recall_fp compares them: a vector of the memo's
 * (aligned) and one loaded from the stack (8-byte aligned at least). */
typedef uint64_t u64x2 __attribute__((vector_size(16)));
typedef uint64_t u64x2_stack __attribute__((vector_size(16), aligned(8), may_alias));


/* recall for hp_cfa_walk_fp's memos (key rbp 0), whose words are pairs,
 * the saved rbp and the return address of one frame: pair 0 at base, pair
 * j at the address the saved rbp of pair j - 1 holds (the walk goes from
 * frame to frame by it). So every address the compare reads is one of
 * the memo's values, never the stack's: all pairs are compared in one
 * vector of differences (a load, an xor and an or a pair, no branch), and
 * one test at the end, after the word that told the last other walk apart
 * (as recall). The addresses all lie in the thread's stack, [stack_lo,
 * stack_hi) (the walk read them there: hp_cfa_walk_fp), so reading them
 * is safe whatever the stack holds now. */
static inline __attribute__((always_inline)) int recall_fp(struct hp_thread *t, struct table *tab,
							   uint32_t set, uintptr_t base,
							   uintptr_t rip, uintptr_t rsp,
							   uint32_t max, uint64_t *frames,
							   uint64_t *hash, uint32_t *stack)
{
	struct memo *m = tab->memo[set];
	uint32_t n, pairs;
	uint64_t kept;
	u64x2 d;

	for (unsigned w = 0; w < MEMO_WAYS; w++, m++) {
		/* rsp, the disc word, the rest of the key: as recall */
		if (m->rsp != rsp || WORD(base, m->disc_off) != m->disc_val)
			continue;
		if ((m->rip ^ rip) | (m->max ^ max))
			continue;
		const u64x2 *v = (const u64x2 *)m->val, *end;

		pairs = m->reads / 2; /* 1 or more: the key matched */
		d = *(const u64x2_stack *)base ^ v[0];
		/* The pairs after it: pair j's vector v[j], its address the
		 * word before it, m->val[2j - 2] (PAIR_DIFF(w) for w = v + j);
		 * (pairs - 1) % 4 first, then four a round (two a round and
		 * a tail took 5.5 instructions a pair; eight a round entered
		 * part way, as recall's, 6.2: the compiler keeps an index a
		 * pair). */
#define PAIR_DIFF(w) (*(const u64x2_stack *)((const uint64_t *)(w))[-2] ^ *(w))
		v++;
		end = v + (pairs - 1);
		switch ((pairs - 1) & 3) {
		case 3:
			d |= PAIR_DIFF(v);
			v++;
			__attribute__((fallthrough));
		case 2:
			d |= PAIR_DIFF(v);
			v++;
			__attribute__((fallthrough));
		case 1:
			d |= PAIR_DIFF(v);
			v++;
			break;
		default:
			break;
		}
		for (; v < end; v += 4)
			d |= PAIR_DIFF(v) | PAIR_DIFF(v + 1) | PAIR_DIFF(v + 2) | PAIR_DIFF(v + 3);
#undef PAIR_DIFF
		if (__builtin_expect((d[0] | d[1]) != 0, 0)) {
			set_disc(m, differing_word(m, base));
			continue;
		}
		t->cfa_memo = m;
		*hash = m->hash;
		if (stack && m->h.stack) { /* interned already: no frames needed */
			*stack = m->h.stack;
			return (int)m->n;
		}
		n = 0;
		if (m->lead)
			frames[n++] = m->rip;
		for (kept = m->kept; kept; kept &= kept - 1)
			frames[n++] = m->val[__builtin_ctzll(kept)];
		return (int)n;
	}
	return -1;
}

void hp_cfa_remember(struct hp_thread *t, uint32_t stack)
{
	struct memo *m = t->cfa_memo;

	if (m && m->h.stack != stack) {
		m->h.stack = stack;
		m->h.bucket = 0;
	}
}

void hp_cfa_remember_bucket(struct hp_thread *t, uint32_t origin, uint32_t bucket, void *at)
{
	struct memo *m = t->cfa_memo;

	if (m && m->h.stack) {
		m->h.origin = origin;
		m->h.bucket = bucket;
		m->h.bucket_at = at;
	}
}

/* The walk of a stack deeper than max on from rip, the first frame past
 * the max in frames[] (roots.h). Returns the frames kept, or -1 when
 * libunwind must walk. As step: allocation-free and lock-free on hits. */
static __attribute__((noinline, cold)) int walk_roots(struct table *tab, struct rule **rules,
						      uintptr_t *mask, uintptr_t lo, uintptr_t span,
						      uintptr_t base, uintptr_t rip, uintptr_t rsp,
						      uintptr_t rbp, struct notes *nt,
						      uint32_t *reads, uintptr_t *rbp_at,
						      uint64_t *frames, uint32_t max)
{
	struct hp_roots g;
	int r;

	hp_roots_begin(&g, frames, max);
	for (;;) {
		if (hp_roots_add(&g, rip))
			return (int)hp_roots_end(&g, 0);
		r = step(tab, rules, mask, lo, span, base, &rip, &rsp, &rbp, nt, reads, rbp_at);
		if (r < 0)
			return -1;
		if (r > 0 || rip < LOWEST_RIP)
			return (int)hp_roots_end(&g, 1);
	}
}

/* Set (relaxed) when an entry (cfa_cache.h) was not where the walk found
 * the recorder's frames to end: entries are ignored from then on, and
 * walks remembered from their own start again. */
static int entry_unreliable;

/* entry when it is given, trusted and a stack word's address (8-aligned),
 * else 0. */
static inline uintptr_t entry_of(uintptr_t entry)
{
	return entry && !(entry & 7) && !__atomic_load_n(&entry_unreliable, __ATOMIC_RELAXED)
		       ? entry
		       : 0;
}

/* The key rsp of a walk remembered from its own start (no entry): its rsp
 * with bit 0 set, so that it never equals an entry's (8-aligned), whose
 * base (entry - 16) is another for the same rsp: recall reads a memo's
 * first word before the rest of its key, at base plus its offset, which
 * a walk of the same key read at the same address before. */
#define OWN_KEY(rsp) ((rsp) | 1)

/* The remembered walk of the program's frames from entry (its rsp where
 * it called the recorder, HP_CFA_ENTRY), DWARF's or with fp the
 * frame-pointer walk's, when one matches: as hp_cfa_walk and
 * hp_cfa_walk_fp return on a hit. -1 when none does: the caller then
 * calls hp_cfa_walk_stepped or hp_cfa_walk_fp_stepped, which walk without
 * looking again; -2 when they would not look (no table of this
 * generation, unknown stack bounds, no usable entry): the caller then
 * calls hp_cfa_walk or hp_cfa_walk_fp. With an
 * entry the key is the program's registers, not the walk's own frame, so
 * the look may be inlined into the recorder's slow path: record_path.c
 * compiles this file into it (one call, one prologue and epilogue fewer
 * a remembered walk). As hp_cfa_walk: lock-free, allocation-free,
 * async-signal-safe. */
static inline __attribute__((always_inline)) int hp_cfa_recall_entry(struct hp_thread *t,
								     uint64_t *frames, uint32_t max,
								     uint64_t *hash, uint32_t *stack,
								     uintptr_t entry, int fp)
{
	struct table *tab = t->cfa_cache;
	uintptr_t key_rip;
	uint32_t set;

	if (__builtin_expect((uintptr_t)tab <= 1 ||
				     t->cfa_generation !=
					     __atomic_load_n(&generation, __ATOMIC_RELAXED) ||
				     t->stack_hi <= t->stack_lo + 16 || !entry_of(entry),
			     0))
		return -2;
	if (stack)
		*stack = 0;
	key_rip = ((const uintptr_t *)entry)[-1];
	set = (uint32_t)(entry >> 4) & (MEMO_SETS - 1);
	if (fp)
		return recall_fp(t, tab, set, entry - 16, key_rip, entry, max, frames, hash, stack);
	return recall(t, tab, set, entry - 16, key_rip, entry, 0, max, frames, hash, stack);
}

/* hp_cfa_walk when no remembered walk matched: the walk from the
 * registers of hp_cfa_walk's frame fp (still live: this is its callee),
 * stepped with the rules and remembered as it goes. Apart, so that the
 * remembered walks' path saves only the registers it needs. entry as
 * entry_of gave it. Properties as hp_cfa_walk. */
static __attribute__((noinline)) int walk_on(struct hp_thread *t, uint64_t *frames, uint32_t max,
					     uint64_t *hash, uintptr_t entry, const uintptr_t *fp)
{
	const uintptr_t lo = t->stack_lo, span = t->stack_hi - t->stack_lo - 8;
	const uint32_t limit = max + HP_UNWIND_SLACK;
	uintptr_t rip = fp[1], rsp = (uintptr_t)(fp + 2), rbp = fp[0];
	const uintptr_t key_rip = entry ? ((const uintptr_t *)entry)[-1] : rip;
	const uintptr_t key_rsp = entry ? entry : OWN_KEY(rsp), base = entry ? entry - 16 : rsp;
	const uintptr_t key_rbp = entry ? 0 : rbp;
	const uint32_t set = (uint32_t)(key_rsp >> 4) & (MEMO_SETS - 1);
	struct table *tab = t->cfa_cache;
	struct memo *tr;
	uint64_t h = HP_HASH_STACK_SEED;
	uint32_t n = 0, walked, stop = 0, rip_at = UINT32_MAX, lead = 0;
	uintptr_t rbp_at = 0; /* where rbp was last read from, until a step uses it */
	struct rule *rules;  /* tab->rules and tab->mask, reloaded when fill grows them */
	uintptr_t mask;
	uint32_t reads;       /* words noted (struct memo), kept here while walking */
	uint64_t kept;        /* the kept frames among them */
	uint32_t nkept;       /* bits set in kept (each frame's word is a later one) */
	struct notes nt;      /* the words themselves */
	int r;

	/* Else this walk is noted into the set's next way, the one evicted
	 * (emptied: rsp 0 until it is remembered), and stepped with the
	 * rules (counted in the window of fill). */
	tr = &tab->memo[set][tab->memo_next[set]++ & (MEMO_WAYS - 1)];
	tab->stepped++;
	rules = tab->rules;
	mask = tab->mask;
	tr->rsp = 0;
	tr->reads = 0;
	reads = 0;
	kept = 0;
	nkept = 0;
	if (!max || rip < LOWEST_RIP)
		goto out;
	walked = 1;
	while (hp_unwind_is_own(rip)) {
		if (walked >= limit)
			goto out;
		r = step(tab, &rules, &mask, lo, span, base, &rip, &rsp, &rbp, &nt, &reads, &rbp_at);
		if (r < 0)
			goto fail;
		rip_at = reads - 1; /* the word rip came from: step's last note */
		if (r > 0 || rip < LOWEST_RIP)
			goto out;
		walked++;
	}
	if (entry) {
		/* The walk goes on from the key: its own frames' words (below
		 * base, which poisoned the memo) are not its words, the first
		 * frame is the key's rip, and rbp is the word the recorder's
		 * outermost frame saved at rsp - 16 (base), a word of the walk
		 * only if a step uses it (the program's rbp is anything in
		 * code without frame pointers: not a key). */
		if (rip != key_rip || rsp != key_rsp || rbp != *(const uintptr_t *)base) {
			__atomic_store_n(&entry_unreliable, 1, __ATOMIC_RELAXED);
			reads = MEMO_POISON;
		} else {
			reads = 0;
			kept = 0;
			nkept = 0;
			rbp_at = base;
			rip_at = UINT32_MAX;
			lead = 1;
		}
	}
	/* Kept frames end at max, or where the walk's limit falls. */
	stop = limit - walked + 1 < max ? limit - walked + 1 : max;
	for (;;) {
		frames[n++] = rip;
		if (rip_at < MEMO_READS) {
			kept |= 1ull << rip_at;
			nkept++;
		}
		h = hp_hash_stack_step(h, rip);
		if (n >= stop && (stop < max || max < 2))
			break;
		r = step(tab, &rules, &mask, lo, span, base, &rip, &rsp, &rbp, &nt, &reads, &rbp_at);
		if (r < 0)
			goto fail;
		rip_at = reads - 1;
		if (r > 0 || rip < LOWEST_RIP)
			break;
		if (n >= max) { /* deeper than max: its roots (roots.h) */
			r = walk_roots(tab, &rules, &mask, lo, span, base, rip, rsp, rbp, &nt, &reads,
				       &rbp_at, frames, max);
			if (r < 0)
				goto fail;
			n = (uint32_t)r;
			tr->reads = 0; /* not remembered: its words are too many */
			*hash = hp_hash_stack(frames, n);
			return (int)n;
		}
	}
out:
	*hash = hp_hash_stack_end(h, n);
	/* Remembered when every word fits and every kept frame is a word
	 * read (not the starting rip) or the key's rip; from a key, when
	 * the walk reached it and kept all it may (the frames the recorder's
	 * own take from max + HP_UNWIND_SLACK are not in the key). */
	if (reads <= MEMO_READS && nkept + lead == n && (!entry || (lead && stop == max))) {
		memcpy(tr->off, nt.off, reads * sizeof *nt.off);
		memcpy(tr->val, nt.val, reads * sizeof *nt.val);
		tr->reads = reads;
		tr->kept = kept;
		tr->rip = key_rip;
		tr->rsp = key_rsp;
		tr->rbp = key_rbp;
		tr->lead = (uint8_t)lead;
		set_disc(tr, reads ? reads - 1 : 0);
		tr->max = max;
		tr->n = (uint16_t)n;
		tr->hash = *hash;
		tr->h.stack = 0;
		tr->h.bucket = 0;
		if (!reads) /* read nothing: nothing to remember */
			tr->rsp = 0;
		else
			t->cfa_memo = tr;
	} else {
		tr->reads = 0;
	}
	return (int)n;
fail:
	tr->reads = 0;
	return -1;
}

__attribute__((noinline)) int hp_cfa_walk(struct hp_thread *t, uint64_t *frames, uint32_t max,
					  uint64_t *hash, uint32_t *stack, uintptr_t entry)
{
	const uintptr_t *fp = __builtin_frame_address(0);
	uintptr_t rip, rsp, rbp, base;
	struct table *tab = t->cfa_cache;
	uintptr_t key_rip, key_rsp, key_rbp;
	uint32_t set;
	int r;

	if (stack)
		*stack = 0;
	t->cfa_memo = NULL;
	if (__builtin_expect((uintptr_t)tab <= 1 ||
				     t->cfa_generation !=
					     __atomic_load_n(&generation, __ATOMIC_RELAXED),
			     0)) {
		if (prepare(t) < 0)
			return -1;
		tab = t->cfa_cache;
	}
	if (t->stack_hi <= t->stack_lo + 16) /* unknown bounds (1, 1) */
		return -1;
	/* The walk unw_backtrace(frames, limit) would make from our caller,
	 * then the recorder's own frames at its start dropped and at most
	 * max of the rest kept (unwind.c). This function's own frame first (frame pointers: the recorder is built with them): the step
	 * libunwind takes out of unw_backtrace's. */
	rbp = fp[0];
	rip = fp[1];
	rsp = (uintptr_t)(fp + 2);
	/* A walk remembered from these registers whose words are unchanged
	 * is this walk (see struct memo). With an entry, from the program's
	 * registers where the recorder's frames end: the words of those
	 * frames are not compared (nor walked). */
	entry = entry_of(entry);
	if (entry) {
		key_rip = ((const uintptr_t *)entry)[-1];
		key_rsp = entry;
		key_rbp = 0;
		base = entry - 16;
	} else {
		key_rip = rip;
		key_rsp = OWN_KEY(rsp);
		key_rbp = rbp;
		base = rsp;
	}
	set = (uint32_t)(key_rsp >> 4) & (MEMO_SETS - 1);
	r = recall(t, tab, set, base, key_rip, key_rsp, key_rbp, max, frames, hash, stack);
	if (r >= 0)
		return r;
	return walk_on(t, frames, max, hash, entry, fp);
}

/* hp_cfa_walk_fp when no remembered walk matched: the walk from the
 * frame at (hp_cfa_walk_fp's, still live: this is its callee), remembered
 * as it goes. Apart, so that the remembered walks' path saves only the
 * registers it needs. entry as entry_of gave it. Properties as
 * hp_cfa_walk_fp. */
static __attribute__((noinline)) int walk_fp_on(struct hp_thread *t, uint64_t *frames,
						uint32_t max, uint64_t *hash, uintptr_t entry,
						uintptr_t at)
{
	const uintptr_t lo = t->stack_lo, hi = t->stack_hi;
	const uintptr_t key_rip = entry ? ((const uintptr_t *)entry)[-1] : 0;
	const uintptr_t key_rsp = entry ? entry : OWN_KEY(at), base = entry ? entry - 16 : at;
	const uint32_t set = (uint32_t)(key_rsp >> 4) & (MEMO_SETS - 1);
	struct table *tab = t->cfa_cache;
	uintptr_t next, ret;
	struct memo *tr;
	uint64_t h = HP_HASH_STACK_SEED;
	uint32_t n = 0, lead = 0;

	tr = &tab->memo[set][tab->memo_next[set]++ & (MEMO_WAYS - 1)];
	tr->rsp = 0;
	tr->reads = 0;
	tr->kept = 0;
	if (!max)
		goto out;
	for (;;) {
		if (at < lo || at + 2 * sizeof(uintptr_t) > hi || (at & 7))
			goto out;
		next = ((const uintptr_t *)at)[0];
		note_memo(tr, base, at, next);
		ret = ((const uintptr_t *)at)[1];
		note_memo(tr, base, at + 8, ret);
		if (!ret)
			goto out;
		if (!hp_unwind_is_own(ret))
			break;
		if (next <= at)
			goto out;
		at = next;
	}
	if (entry) { /* as in hp_cfa_walk; the frame at is at base */
		if (at != base) { /* (then next and ret are the words at base) */
			__atomic_store_n(&entry_unreliable, 1, __ATOMIC_RELAXED);
			tr->reads = MEMO_POISON;
		} else {
			tr->reads = 0;
			tr->kept = 0;
			/* the pair at base: the word the walk goes on from,
			 * and the key's return address (equal to the key's
			 * whenever the key matches: noted so that the words
			 * stay pairs, recall_fp) */
			note_memo(tr, base, at, next);
			note_memo(tr, base, at + 8, ret);
			lead = 1;
		}
	}
	for (;;) { /* frame at is valid: its return address ret is the next */
		frames[n++] = ret;
		if (tr->reads - 1 < MEMO_READS && n > lead) /* (a lead is the key's) */
			tr->kept |= 1ull << (tr->reads - 1);
		h = hp_hash_stack_step(h, ret);
		if (next <= at || next + 2 * sizeof(uintptr_t) > hi || (next & 7))
			break;
		if (n >= max) {
			if (max < 2)
				break;
			/* Deeper than max, perhaps: its roots (roots.h), not
			 * remembered (the words past max are not noted). */
			n = hp_roots_fp(frames, max, next, hi);
			tr->reads = 0;
			*hash = hp_hash_stack(frames, n);
			return (int)n;
		}
		at = next;
		next = ((const uintptr_t *)at)[0];
		note_memo(tr, base, at, next);
		ret = ((const uintptr_t *)at)[1];
		note_memo(tr, base, at + 8, ret);
		if (!ret)
			break;
	}
out:
	*hash = hp_hash_stack_end(h, n);
	if (tr->reads && tr->reads <= MEMO_READS && !(tr->reads & 1) && /* pairs: recall_fp */
	    (uint32_t)__builtin_popcountll(tr->kept) + lead == n && (!entry || lead)) {
		tr->rip = key_rip;
		tr->rsp = key_rsp;
		tr->rbp = 0;
		tr->lead = (uint8_t)lead;
		set_disc(tr, tr->reads - 1);
		tr->max = max;
		tr->n = (uint16_t)n;
		tr->hash = *hash;
		tr->h.stack = 0;
		tr->h.bucket = 0;
		t->cfa_memo = tr;
	} else {
		tr->reads = 0;
	}
	return (int)n;
}

__attribute__((noinline)) int hp_cfa_walk_fp(struct hp_thread *t, uint64_t *frames, uint32_t max,
					     uint64_t *hash, uint32_t *stack, uintptr_t entry)
{
	uintptr_t at = (uintptr_t)__builtin_frame_address(0);
	uintptr_t key_rip, key_rsp, base;
	struct table *tab = t->cfa_cache;
	uint32_t set;
	int r;

	if (stack)
		*stack = 0;
	t->cfa_memo = NULL;
	if (__builtin_expect((uintptr_t)tab <= 1 ||
				     t->cfa_generation !=
					     __atomic_load_n(&generation, __ATOMIC_RELAXED),
			     0)) {
		if (prepare(t) < 0)
			return -1;
		tab = t->cfa_cache;
	}
	if (t->stack_hi <= t->stack_lo + 16) /* unknown bounds (1, 1) */
		return -1;
	/* As for the DWARF walks: the walk from this frame is a function of
	 * its address and the words it reads (the walk of unwind.c's
	 * walk_fp, which reads two words a frame); with an entry, the walk
	 * from the program's frame where the recorder's end is a function of
	 * the entry's registers (its return address, the frame's address
	 * rsp - 16 and the saved rbp in it, the next frame's) and the words
	 * it reads above. */
	entry = entry_of(entry);
	if (entry) {
		key_rip = ((const uintptr_t *)entry)[-1];
		key_rsp = entry;
		base = entry - 16;
	} else {
		key_rip = 0;
		key_rsp = OWN_KEY(at);
		base = at;
	}
	set = (uint32_t)(key_rsp >> 4) & (MEMO_SETS - 1);
	r = recall_fp(t, tab, set, base, key_rip, key_rsp, max, frames, hash, stack);
	if (r >= 0)
		return r;
	return walk_fp_on(t, frames, max, hash, entry, at);
}

int hp_cfa_walk_stepped(struct hp_thread *t, uint64_t *frames, uint32_t max, uint64_t *hash,
			uintptr_t entry)
{
	t->cfa_memo = NULL;
	return walk_on(t, frames, max, hash, entry, __builtin_frame_address(0));
}

int hp_cfa_walk_fp_stepped(struct hp_thread *t, uint64_t *frames, uint32_t max, uint64_t *hash,
			   uintptr_t entry)
{
	t->cfa_memo = NULL;
	return walk_fp_on(t, frames, max, hash, entry, (uintptr_t)__builtin_frame_address(0));
}
