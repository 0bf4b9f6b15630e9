# tools.mk - host programs used by the build and by users.

HOST_TOOLS += $(BUILD)/tools/mkinitrd

.PHONY: host-tools
host-tools: $(HOST_TOOLS)

$(BUILD)/tools/mkinitrd: tools/mkinitrd.c kernel/uapi/initrd.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_TOOL_CFLAGS) -o $@ $<

# The guest programs' usage and help, from their comments (apps/apps.mk).
HOST_TOOLS += $(BUILD)/tools/progdoc
$(BUILD)/tools/progdoc: tools/progdoc.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_TOOL_CFLAGS) -o $@ $<

include tools/bench/bench.mk
include tools/powercut/powercut.mk
include tools/memtouch/memtouch.mk
