# drivers.mk - build rules for drivers/ (appends to KERNEL_SRCS, HOST_TESTS, HOST_TOOLS; see docs/architecture.md)
#
# The block layer, RAM disk, disk model, model-timed disk, virtqueues, the
# virtio-blk and virtio-scsi request engines and the SCSI layer are portable
# C, linked into the kernel and tested on the host here.  The rest is kernel
# glue: the virtio transports, device bring-up, the model's clock, the raw
# path and boot-time bring-up (devices.c).

KERNEL_SRCS += drivers/blkqueue.c drivers/ramdisk.c drivers/diskmodel.c drivers/modeldisk.c \
               drivers/virtqueue.c drivers/vblk.c drivers/virtio.c drivers/virtio_blk.c \
               drivers/scsi_sense.c drivers/scsi_disk.c drivers/vscsi.c drivers/virtio_scsi.c \
               drivers/modeldev.c drivers/rawio.c drivers/devices.c

DRV_HOST_DIR := $(BUILD)/host/drivers
DRV_TEST_DIR := tests/host/drivers
DRV_HEADERS  := $(wildcard drivers/*.h) kernel/uapi/blkexport.h \
                $(wildcard $(DRV_TEST_DIR)/*.h)

# Each test: its own source plus the driver sources it exercises.
DRV_TESTS := test_blkqueue test_blkref test_blkexport test_ramdisk test_diskmodel test_clook_sim \
             test_virtqueue test_vblk test_scsi test_vscsi

$(DRV_HOST_DIR)/test_blkqueue:  drivers/blkqueue.c
$(DRV_HOST_DIR)/test_blkref:    drivers/blkqueue.c
$(DRV_HOST_DIR)/test_blkexport: drivers/blkqueue.c drivers/ramdisk.c
$(DRV_HOST_DIR)/test_ramdisk:   drivers/blkqueue.c drivers/ramdisk.c
$(DRV_HOST_DIR)/test_diskmodel: drivers/diskmodel.c
$(DRV_HOST_DIR)/test_clook_sim: drivers/blkqueue.c drivers/ramdisk.c drivers/diskmodel.c drivers/modeldisk.c
$(DRV_HOST_DIR)/test_virtqueue: drivers/virtqueue.c
$(DRV_HOST_DIR)/test_vblk:      drivers/blkqueue.c drivers/virtqueue.c drivers/vblk.c
$(DRV_HOST_DIR)/test_scsi:      drivers/blkqueue.c drivers/scsi_sense.c drivers/scsi_disk.c
$(DRV_HOST_DIR)/test_vscsi:     drivers/blkqueue.c drivers/virtqueue.c drivers/scsi_sense.c drivers/scsi_disk.c \
                                drivers/vscsi.c

$(addprefix $(DRV_HOST_DIR)/,$(DRV_TESTS)): $(DRV_HOST_DIR)/%: $(DRV_TEST_DIR)/%.c $(DRV_HEADERS)
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -o $@ $(filter %.c,$^) -lm -lpthread

HOST_TESTS += $(addprefix $(DRV_HOST_DIR)/,$(DRV_TESTS))

# Guest programs of this directory's: they share apps/rawlib.c (the raw path
# and the data pattern); rawbench also links the disk model for its predictions.
APP_OBJS_disktest := $(ABUILD)/u/apps/rawlib.c.o
APP_OBJS_rawbench := $(ABUILD)/u/apps/rawlib.c.o $(ABUILD)/u/drivers/diskmodel.c.o
