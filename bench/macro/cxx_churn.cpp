/*
 * cxx_churn: the allocation pattern of ordinary C++ container code.
 *
 *   cxx_churn [ROUNDS]      ROUNDS 600000 by default (~2.9 million allocations)
 *
 * The model: a toy text indexer. Each round makes up a word (a std::string
 * grown one character at a time, often past the small-string buffer), records
 * its position in a std::map<std::string, std::vector<int>> (node, key and
 * vector growth), keeps a std::unordered_map<uint64_t, std::string> cache of
 * formatted lines (std::to_string and operator+ temporaries), and evicts from
 * both so they stay at a bounded, steady size. Every allocation goes through
 * operator new and delete from libstdc++ and the standard containers.
 *
 * The work is a fixed-seed xorshift stream, so every run is identical.
 *
 * With BENCH_REPORT=1 in the environment, a build with -DBENCH_COUNT_NEW
 * prints "allocations: N" to stderr, N being the number of calls to operator
 * new. Counting needs a replacement operator new, and a replacement in the
 * executable would hide libstdc++'s own from any profiler that interposes it,
 * so bench/macro/run.sh builds a separate counting binary (cxx_churn-count)
 * to learn N and measures the plain one.
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#ifdef BENCH_COUNT_NEW
/* Calls to operator new so far; the program is single-threaded. */
static uint64_t new_count;

void *operator new(std::size_t size_bytes)
{
	new_count++;
	/* malloc(0) may return NULL; operator new must not. */
	void *p = std::malloc(size_bytes ? size_bytes : 1);
	if (!p)
		throw std::bad_alloc();
	return p;
}

void operator delete(void *p) noexcept
{
	std::free(p);
}

void operator delete(void *p, std::size_t) noexcept
{
	std::free(p);
}
#endif

namespace {

constexpr int kDefaultRounds = 600000;
constexpr std::size_t kMaxIndexWords = 20000;  /* the map's steady size */
constexpr std::size_t kMaxCacheLines = 5000;   /* the unordered_map's steady size */
constexpr unsigned kMaxWordLength = 40;

/* xorshift64 (Marsaglia 2003): fast and deterministic. */
struct Rng {
	uint64_t state = 0x9E3779B97F4A7C15ull;

	uint64_t next()
	{
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		return state;
	}

	/* A value in [0, n). */
	unsigned below(unsigned n) { return static_cast<unsigned>(next() % n); }
};

/* A made-up word: grown one character at a time, as a tokenizer would. */
std::string make_word(Rng &rng)
{
	std::string word;
	/* Skewed towards short words: most fit the small-string buffer, some do not. */
	unsigned length = 2 + rng.below(8);
	if (rng.below(4) == 0)
		length += rng.below(kMaxWordLength);
	/* A small alphabet, so that words repeat and the index vectors grow. */
	for (unsigned i = 0; i < length; i++)
		word += static_cast<char>('a' + rng.below(6));
	return word;
}

/* A formatted line: a chain of operator+ temporaries and std::to_string. */
std::string format_line(const std::string &word, int position, std::size_t hits)
{
	return "word " + word + " at " + std::to_string(position) + " seen " + std::to_string(hits) +
	       " times";
}

} // namespace

int main(int argc, char **argv)
{
	int rounds = kDefaultRounds;
	if (argc > 2 || (argc == 2 && (rounds = std::atoi(argv[1])) <= 0)) {
		std::fprintf(stderr, "usage: cxx_churn [ROUNDS]\n");
		return 2;
	}

	Rng rng;
	std::map<std::string, std::vector<int>> index;
	std::unordered_map<uint64_t, std::string> cache;
	uint64_t checksum = 0;

	for (int position = 0; position < rounds; position++) {
		std::string word = make_word(rng);

		std::vector<int> &positions = index[word];
		positions.push_back(position);

		uint64_t key = rng.next() % (4 * kMaxCacheLines);
		cache[key] = format_line(word, position, positions.size());

		/* Evict at random so both containers keep churning at a steady size. */
		if (index.size() > kMaxIndexWords) {
			auto victim = index.lower_bound(make_word(rng));
			if (victim == index.end())
				victim = index.begin();
			checksum += victim->second.size();
			index.erase(victim);
		}
		if (cache.size() > kMaxCacheLines)
			cache.erase(rng.next() % (4 * kMaxCacheLines));
	}

	/* Use the results, so the work cannot be optimised away. */
	for (const auto &entry : cache)
		checksum += entry.second.size();
	if (checksum == 42)
		std::puts("lucky");

#ifdef BENCH_COUNT_NEW
	const char *report = std::getenv("BENCH_REPORT");
	if (report && std::strcmp(report, "1") == 0)
		std::fprintf(stderr, "allocations: %llu\n", static_cast<unsigned long long>(new_count));
#endif
	return 0;
}
