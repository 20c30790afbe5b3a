/*
 * encode.c - building capture records (see format.h for the layout): the
 * buffer, the file header, the record frame, and the encoder of each part
 * of each record (records.h).
 */
#include "encode.h"

#include <errno.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "../common/varint.h"
#include "format.h"
#include "records.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <emmintrin.h>
#include <wmmintrin.h>
#endif

/* hp_buf_reserve, inline in this file's encoders (a snapshot's stacks,
 * buckets and histograms reserve once each, 3 million times for 2^20
 * stacks). */
static inline __attribute__((always_inline)) uint8_t *reserve(struct hp_buf *b, size_t n)
{
	if (b->err)
		return NULL;
	if (b->cap - b->len < n) {
		int err = b->grow ? b->grow(b, b->len + n) : -ENOMEM;
		if (err) {
			b->err = err;
			return NULL;
		}
	}
	return b->data + b->len;
}

uint8_t *hp_buf_reserve(struct hp_buf *b, size_t n)
{
	return reserve(b, n);
}

void hp_buf_put_bytes(struct hp_buf *b, const void *p, size_t n)
{
	uint8_t *q = hp_buf_reserve(b, n);
	if (q) {
		if (n)
			memcpy(q, p, n);
		b->len += n;
	}
}

void hp_buf_put_u_grow(struct hp_buf *b, uint64_t v)
{
	uint8_t *q = hp_buf_reserve(b, HP_VARINT_MAX_BYTES);
	if (q)
		b->len += hp_varint_put(q, v);
}

void hp_buf_put_s(struct hp_buf *b, int64_t v)
{
	hp_buf_put_u(b, hp_zigzag_encode(v));
}

void hp_buf_put_blob(struct hp_buf *b, const void *p, size_t n)
{
	hp_buf_put_u(b, n);
	hp_buf_put_bytes(b, p, n);
}

void hp_buf_put_str(struct hp_buf *b, const char *s)
{
	hp_buf_put_blob(b, s, s ? strlen(s) : 0);
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t crc(const uint8_t *p, size_t n)
{
	return hp_format_crc(0, p, n);
}

void hp_format_put_file_header(struct hp_buf *out)
{
	uint8_t h[HP_FORMAT_FILE_HEADER_BYTES] = {0};

	memcpy(h, HP_FORMAT_MAGIC, 8);
	put_le(h + 8, HP_FORMAT_MAJOR, 2);
	put_le(h + 10, HP_FORMAT_MINOR, 2);
	put_le(h + 12, HP_FORMAT_FILE_HEADER_BYTES, 4);
	put_le(h + 28, crc(h, 28), 4);
	hp_buf_put_bytes(out, h, sizeof h);
}

/* Payloads this small are stored as they are: a zstd frame would not save. */
#define MIN_COMPRESS_BYTES 128

int hp_format_put_record(struct hp_buf *out, unsigned type, const uint8_t *payload,
			 size_t raw_len, struct ZSTD_CCtx_s *cctx)
{
	size_t bound = ZSTD_compressBound(raw_len);
	size_t stored = raw_len;
	unsigned flags = 0;
	uint8_t *frame;

	if (raw_len > HP_FORMAT_MAX_PAYLOAD_BYTES) {
		out->err = out->err ? out->err : -EFBIG;
		return out->err;
	}
	frame = hp_buf_reserve(out, HP_FORMAT_FRAME_BYTES + (bound > raw_len ? bound : raw_len));
	if (!frame)
		return out->err;
	if (cctx && raw_len >= MIN_COMPRESS_BYTES) {
		size_t n = ZSTD_compressCCtx(cctx, frame + HP_FORMAT_FRAME_BYTES, bound, payload,
					     raw_len, 1);
		if (!ZSTD_isError(n) && n < raw_len) {
			stored = n;
			flags |= HP_FORMAT_FLAG_ZSTD;
		}
	}
	if (!(flags & HP_FORMAT_FLAG_ZSTD) && raw_len)
		memcpy(frame + HP_FORMAT_FRAME_BYTES, payload, raw_len);

	hp_format_frame(frame, type, flags, stored, raw_len, crc(frame + HP_FORMAT_FRAME_BYTES, stored));
	out->len += HP_FORMAT_FRAME_BYTES + stored;
	return 0;
}

#if defined(__x86_64__)
/* The CRC-32 of p[0..n) (n at least 64 and a multiple of 16) continued from
 * the register value r (the CRC's complement, as the polynomial division
 * keeps it), by folding: four 128-bit lanes, each multiplied without carry
 * (PCLMULQDQ) by x^512 mod P and x^576 mod P and added to the data 64 bytes
 * on, then the lanes folded into one, 16 bytes at a time, to 64 and 32 bits
 * and a Barrett reduction by P. The constants are those powers of x modulo
 * zlib's polynomial, bit-reflected (V. Gopal et al., "Fast CRC Computation
 * for Generic Polynomials Using PCLMULQDQ Instruction", Intel, 2009). Some
 * 20 times zlib's byte-table speed: a capture's records are CRC'd as they
 * are written (the event log's chunks, 15 KiB each). */
__attribute__((target("pclmul"))) static uint32_t crc_fold(uint32_t r, const uint8_t *p, size_t n)
{
	const __m128i k512 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
	const __m128i k128 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
	const __m128i k64 = _mm_set_epi64x(0, 0x0163cd6124);
	const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
	const __m128i low32 = _mm_set_epi32(0, -1, 0, -1);
	__m128i a = _mm_loadu_si128((const __m128i *)p), b, c, d, t;

	a = _mm_xor_si128(a, _mm_cvtsi32_si128((int)r));
	b = _mm_loadu_si128((const __m128i *)(p + 16));
	c = _mm_loadu_si128((const __m128i *)(p + 32));
	d = _mm_loadu_si128((const __m128i *)(p + 48));
	for (p += 64, n -= 64; n >= 64; p += 64, n -= 64) {
#define FOLD(x, k, next)                                                         \
	(x) = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128((x), (k), 0x00),  \
					  _mm_clmulepi64_si128((x), (k), 0x11)), \
			    (next))
		FOLD(a, k512, _mm_loadu_si128((const __m128i *)p));
		FOLD(b, k512, _mm_loadu_si128((const __m128i *)(p + 16)));
		FOLD(c, k512, _mm_loadu_si128((const __m128i *)(p + 32)));
		FOLD(d, k512, _mm_loadu_si128((const __m128i *)(p + 48)));
	}
	FOLD(a, k128, b);
	FOLD(a, k128, c);
	FOLD(a, k128, d);
	for (; n >= 16; p += 16, n -= 16)
		FOLD(a, k128, _mm_loadu_si128((const __m128i *)p));
#undef FOLD
	/* 128 bits to 64, then to 32 and the Barrett reduction */
	t = _mm_clmulepi64_si128(a, k128, 0x10);
	a = _mm_xor_si128(_mm_srli_si128(a, 8), t);
	t = _mm_srli_si128(a, 4);
	a = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(a, low32), k64, 0x00), t);
	t = _mm_clmulepi64_si128(_mm_and_si128(a, low32), poly, 0x10);
	t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), poly, 0x00);
	a = _mm_xor_si128(a, t);
	return (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(a, 4));
}

/* Whether the CPU has PCLMULQDQ: asked once (cpuid), a race between
 * threads storing the same answer. */
static int have_clmul(void)
{
	static int known; /* 0: not asked, 1: no, 2: yes */
	int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
	unsigned a, b, c, d;

	if (!k) {
		k = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_PCLMUL) ? 2 : 1;
		__atomic_store_n(&known, k, __ATOMIC_RELAXED);
	}
	return k == 2;
}
#endif

uint32_t hp_format_crc(uint32_t c, const uint8_t *p, size_t n)
{
#if defined(__x86_64__)
	if (n >= 64 && have_clmul()) {
		size_t k = n & ~(size_t)15;
		c = ~crc_fold(~c, p, k);
		p += k;
		n -= k;
	}
#endif
	while (n) { /* crc32 takes a uInt length */
		uInt k = n > (1u << 30) ? 1u << 30 : (uInt)n;
		c = (uint32_t)crc32(c, p, k);
		p += k;
		n -= k;
	}
	return c;
}

void hp_format_frame(uint8_t *frame, unsigned type, unsigned flags, size_t stored,
		     size_t raw_len, uint32_t payload_crc)
{
	memcpy(frame, HP_FORMAT_RECORD_TAG, 4);
	put_le(frame + 4, type, 2);
	put_le(frame + 6, flags, 2);
	put_le(frame + 8, stored, 4);
	put_le(frame + 12, raw_len, 4);
	put_le(frame + 16, payload_crc, 4);
	put_le(frame + 20, crc(frame, 20), 4);
}

/* --- the record schemas (records.h) ------------------------------------- */

/* Every field of a fixed group is a u on the wire, a tail's included. */
#define PUT(kind, type, name) hp_buf_put_u(b, v->name);

/* The encoder of a part that is its field list and nothing else: room
 * for every field reserved once, then the varints written with no check
 * each (a snapshot writes a BUCKETS part of 13 fields for every bucket). */
#define ROOM(kind, type, name) +HP_VARINT_MAX_BYTES
#define PUT_AT(kind, type, name) p += hp_varint_put(p, v->name);
#define DEFINE_PUT(part, LIST)                                                 \
	void hp_rec_##part##_put(struct hp_buf *b, const struct hp_rec_##part *v) \
	{                                                                      \
		uint8_t *p = reserve(b, 0 LIST(ROOM));                         \
		if (!p)                                                        \
			return;                                                \
		LIST(PUT_AT)                                                   \
		b->len = (size_t)(p - b->data);                                \
	}

DEFINE_PUT(segment, HP_REC_SEGMENT)
DEFINE_PUT(stacks, HP_REC_STACKS)
DEFINE_PUT(snapshot, HP_REC_SNAPSHOT)
DEFINE_PUT(lost, HP_REC_LOST)
DEFINE_PUT(bucket, HP_REC_BUCKET)
DEFINE_PUT(snapshot_tail, HP_REC_SNAPSHOT_TAIL)
DEFINE_PUT(heap_peak, HP_REC_HEAP_PEAK)
DEFINE_PUT(symaddr, HP_REC_SYMADDR)
DEFINE_PUT(symframe, HP_REC_SYMFRAME)
DEFINE_PUT(symbols_tail, HP_REC_SYMBOLS_TAIL)
DEFINE_PUT(site, HP_REC_SITE)
DEFINE_PUT(hists, HP_REC_HISTS)
DEFINE_PUT(block, HP_REC_BLOCK)

/* A run of classes, its trailing zeros left out (most are: a bucket
 * has one or two classes of 24 and 17; four at a time). */
static void put_classes(struct hp_buf *b, const uint64_t *v, unsigned n)
{
	while (n >= 4 && !(v[n - 1] | v[n - 2] | v[n - 3] | v[n - 4]))
		n -= 4;
	while (n && !v[n - 1])
		n--;
	hp_buf_put_u(b, n);
	for (unsigned i = 0; i < n; i++)
		hp_buf_put_u(b, v[i]);
}

void hp_rec_hist_put(struct hp_buf *b, const struct hp_rec_hist *h)
{
	put_classes(b, h->size, HP_HIST_SIZE_CLASSES);
	put_classes(b, h->life, HP_HIST_LIFE_CLASSES);
}

/* One run of put_classes with at most class c (1-based; 0: none) set to
 * n: its length, c - 1 zero classes (a byte each), then n. */
static uint8_t *put_one_class(uint8_t *p, unsigned c, uint64_t n)
{
	if (!c || !n) {
		*p++ = 0;
		return p;
	}
	p += hp_varint_put(p, c);
	memset(p, 0, c - 1);
	p += c - 1;
	return p + hp_varint_put(p, n);
}

void hp_rec_hist_put_one(struct hp_buf *b, unsigned size_class, uint64_t size_count,
			 unsigned life_class, uint64_t life_count)
{
	uint8_t *p;

	if (size_class > HP_HIST_SIZE_CLASSES || life_class > HP_HIST_LIFE_CLASSES) {
		b->err = b->err ? b->err : -EINVAL;
		return;
	}
	p = reserve(b, 2 * HP_VARINT_MAX_BYTES + HP_HIST_SIZE_CLASSES + HP_HIST_LIFE_CLASSES);
	if (!p)
		return;
	p = put_one_class(p, size_class, size_count);
	p = put_one_class(p, life_class, life_count);
	b->len = (size_t)(p - b->data);
}

void hp_rec_count_put(struct hp_buf *b, uint64_t n)
{
	hp_buf_put_u(b, n);
}

void hp_rec_str_put(struct hp_buf *b, struct hp_rec_str s)
{
	hp_buf_put_blob(b, s.p, s.len);
}

void hp_rec_tag_put(struct hp_buf *b, const struct hp_rec_tag *v)
{
	HP_REC_TAG(PUT)
	hp_rec_str_put(b, v->name);
}

void hp_rec_map_put(struct hp_buf *b, const struct hp_rec_map *v)
{
	HP_REC_MAP(PUT)
	hp_rec_str_put(b, v->name);
}

void hp_rec_meta_put(struct hp_buf *b, const struct hp_rec_meta *v)
{
	HP_REC_META_PROCESS(PUT)
	hp_rec_str_put(b, v->program);
}

void hp_rec_meta_options_put(struct hp_buf *b, const struct hp_rec_meta_options *v)
{
	hp_rec_str_put(b, v->recorder_version);
	HP_REC_META_OPTIONS(PUT)
}

void hp_rec_module_event_put(struct hp_buf *b, const struct hp_rec_module_event *v)
{
	HP_REC_MODULE_EVENT(PUT)
	if (v->kind != HP_MOD_LOAD)
		return;
	hp_rec_str_put(b, v->path);
	hp_rec_str_put(b, v->build_id);
	HP_REC_MODULE_LOAD(PUT)
}

/* Room for the whole stack is reserved once: the values then go in with
 * no check each (a capture's exit writes every stack, 2^20 of them in
 * bench/analyzer/manystacks 10). */
void hp_rec_stack_put(struct hp_buf *b, const uint64_t *frames, uint32_t depth)
{
	uint8_t *p = reserve(b, HP_VARINT_MAX_BYTES * ((size_t)depth + 2));

	if (!p)
		return;
	p += hp_varint_put(p, depth);
	p += hp_varint_put(p, frames[0]);
	for (uint32_t i = 1; i < depth; i++)
		p += hp_varint_put(p, hp_zigzag_encode((int64_t)(frames[i] - frames[i - 1])));
	b->len = (size_t)(p - b->data);
}

void hp_rec_sample_put(struct hp_buf *b, const struct hp_rec_sample *v, uint64_t *prev_ns)
{
	hp_buf_put_s(b, (int64_t)(v->time_ns - *prev_ns));
	*prev_ns = v->time_ns;
	HP_REC_SAMPLE(PUT)
}

void hp_rec_site_tags_put(struct hp_buf *b, const struct hp_rec_site *v)
{
	HP_REC_SITE_TAGS(PUT)
}

void hp_rec_tick_put(struct hp_buf *b, const struct hp_rec_tick *v, uint64_t *prev_ns)
{
	hp_buf_put_s(b, (int64_t)(v->time_ns - *prev_ns));
	*prev_ns = v->time_ns;
	HP_REC_TICK(PUT)
}
