/* sampling.h - the workload of sampling.c: size classes x counts, 256 MiB
 * in all (each class is 32 MiB). */
#ifndef HP_TEST_SAMPLING_H
#define HP_TEST_SAMPLING_H

struct sampling_class {
	unsigned size, count;
};

#define SAMPLING_CLASSES                                                          \
	{                                                                         \
		{16, 2097152}, {48, 699050}, {200, 167772}, {1000, 33554},        \
		{4096, 8192}, {30000, 1118}, {65536, 512}, {1048576, 32},         \
	}

#endif
