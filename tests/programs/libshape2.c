/*
 * libshape2.c - shape_alloc allocates one block, leaked, from a frame without frame pointer (CFA = rsp + 48), 78 bytes.
 *
 * libshape1.so and libshape2.so are laid out alike (the same symbols, and
 * shape_alloc's call to malloc returning to the same offset), but their
 * frames differ: loaded one after the other at the same address, a rule
 * cached for one is wrong for the other, so unwinding them in turn checks
 * that a dlclose empties the rule cache (tests/integration/test_unwind.c).
 */
void shape_alloc(void);
__asm__(".text\n"
	".globl shape_alloc\n"
	".type shape_alloc, @function\n"
	"shape_alloc:\n"
	"	.cfi_startproc\n"
	"	sub $40, %rsp\n"
	"	.cfi_def_cfa_offset 48\n"
	"	mov $78, %edi\n"
	"	call malloc@PLT\n"
	"	add $40, %rsp\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size shape_alloc, .-shape_alloc\n");
