/* dlopener.c - dlopen argv[1], call plugin_alloc, dlclose it. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *h;
	void (*f)(void);

	if (argc < 2 || !(h = dlopen(argv[1], RTLD_NOW))) {
		fprintf(stderr, "dlopener: %s\n", argc < 2 ? "no library" : dlerror());
		return 1;
	}
	f = (void (*)(void))dlsym(h, "plugin_alloc");
	if (!f)
		return 1;
	f();
	return dlclose(h) != 0;
}
