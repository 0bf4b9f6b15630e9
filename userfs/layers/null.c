/*
 * null.c - the null layer: mounted over another mount, it passes every
 * operation down unchanged (docs/stacking.md).  It is the measure of what
 * stacking costs - one more function call per operation - and the
 * smallest complete layer: everything it does comes from STACK_PASS, the
 * bypass for a layer with nothing of its own per open file (its handles
 * are those of the layer below).
 *
 *   mount /view null over=/data
 */
#include "libos/stack/stack.h"

static int null_mount(const char *opts, void **fs)
{
	return stack_mount(opts, sizeof(struct stack_mount), fs);
}

STACK_LAYER_BEGIN
const struct libfs_ops null_ops = {
	STACK_PASS,
	.name = "null",
	.mount = null_mount,
};
STACK_LAYER_END
