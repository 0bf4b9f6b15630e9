# memtouch.mk - the QEMU plugin that measures the guest's memory locality
# (tools/memtouch/memtouch.c).  Not part of `all`: `make memtouch`.

MEMTOUCH := $(BUILD)/tools/memtouch.so
.PHONY: memtouch
memtouch: $(MEMTOUCH)
$(MEMTOUCH): tools/memtouch/memtouch.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_TOOL_CFLAGS) -shared -fPIC -fvisibility=hidden -o $@ $<
