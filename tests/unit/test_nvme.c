/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The NVMe layer through the replay transport. nvme-qemu holds QEMU 7.2's
 * Identify data captured in a guest by tests/vm (with nvme-cli's JSON of
 * the same device, the independent reading); nvme-crafted holds devices
 * QEMU cannot emulate, written from the specification by make-crafted.py.
 * Expected sizes are computed here from the documented rules.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "nvme_hints.h"
#include "nvme_identify.h"
#include "nvme_transport.h"
#include "report.h"

/* Every raw field equals nvme-cli's JSON of the same captured device. */
static void compare_with_nvme_cli(const struct lcloud_layer *l, const char *json_path)
{
	json_object *doc = json_object_from_file(json_path);
	int compared = 0;

	assert_non_null(doc);
	json_object_object_foreach(doc, key, val) {
		const struct lcloud_fact *f = lcloud_layer_find_fact(l, key);

		if (!f)
			continue;
		if (json_object_is_type(val, json_type_string)) {
			char want[64];
			size_t n;

			snprintf(want, sizeof(want), "%s", json_object_get_string(val));
			n = strlen(want);
			while (n > 0 && want[n - 1] == ' ')
				want[--n] = '\0'; /* nvme-cli keeps the padding */
			assert_string_equal(lcloud_fact_get_string(f), want);
		} else {
			assert_int_equal(lcloud_fact_get_u64(f), (uint64_t)json_object_get_int64(val));
		}
		compared++;
	}
	json_object_put(doc);
	assert_true(compared >= 10);
}

static void test_qemu_capture_matches_nvme_cli(void **state)
{
	static const struct {
		const char *dev;
		unsigned int lbs;
	} cases[] = { { "/dev/nvme0n1", 4096 }, { "/dev/nvme1n1", 512 } };
	(void)state;

	for (size_t i = 0; i < 2; i++) {
		struct lcloud_probe *p = fixture_probe("nvme-qemu", cases[i].dev);
		const struct lcloud_layer *l = layer_of_kind(p, LCLOUD_LAYER_NVME);
		char path[4300];

		assert_non_null(l);
		snprintf(path, sizeof(path), "%s/../../vm/captures/qemu-nvme-lbs%u-id-ctrl.json", fixtures_dir, cases[i].lbs);
		compare_with_nvme_cli(l, path);
		snprintf(path, sizeof(path), "%s/../../vm/captures/qemu-nvme-lbs%u-id-ns.json", fixtures_dir, cases[i].lbs);
		compare_with_nvme_cli(l, path);
		/* QEMU 7.2: NSABP clear, AWUPF 0 -> one LBA is the power-fail atomic unit */
		assert_int_equal(fact_u64(l, "lba_size"), cases[i].lbs);
		assert_int_equal(fact_u64(l, "nsabp"), 0);
		assert_int_equal(fact_u64(l, "atomic_write_power_fail_bytes"), cases[i].lbs);
		assert_string_equal(lcloud_fact_get_source(lcloud_layer_find_fact(l, "atomic_write_power_fail_bytes")),
				    "nvme:id-ctrl:awupf");
		assert_null(layer_of_kind(p, LCLOUD_LAYER_CLOUD)); /* not a cloud device */
		lcloud_probe_free(p);
	}
}

static void test_azure_shaped_namespace_atomics(void **state)
{
	struct lcloud_probe *p = fixture_probe("nvme-crafted", "/dev/nvme0n1");
	const struct lcloud_layer *l = layer_of_kind(p, LCLOUD_LAYER_NVME);
	const uint64_t lba = 4096;
	(void)state;

	/* NSABP set: namespace values, 0's based: NAWUPF 3 -> 4 LBAs; NABSPF 15 -> 16 LBAs; NABO 4 LBAs */
	assert_int_equal(fact_u64(l, "nsabp"), 1);
	assert_int_equal(fact_u64(l, "atomic_write_power_fail_bytes"), (3 + 1) * lba);
	assert_int_equal(fact_u64(l, "atomic_boundary_power_fail_bytes"), (15 + 1) * lba);
	assert_int_equal(fact_u64(l, "atomic_boundary_offset_bytes"), 4 * lba);
	assert_string_equal(lcloud_fact_get_source(lcloud_layer_find_fact(l, "atomic_write_power_fail_bytes")),
			    "nvme:id-ns:nawupf");
	assert_string_equal(fact_str(layer_of_kind(p, LCLOUD_LAYER_CLOUD), "provider"), "azure");
	/* the crafted sysfs reports 16384 too: the kernel view agrees */
	assert_int_equal(notes_with(p, NOTE_NVME_KERNEL_VIEW, "honours"), 1);
	lcloud_probe_free(p);
}

static void test_zero_namespace_field_defers_to_controller(void **state)
{
	struct lcloud_probe *p = fixture_probe("nvme-crafted", "/dev/nvme8n1");
	const struct lcloud_layer *l = layer_of_kind(p, LCLOUD_LAYER_NVME);
	(void)state;

	/* NSABP set, NAWUPF 0: the controller's AWUPF 3 applies -> 4 x 4 KiB */
	assert_int_equal(fact_u64(l, "nsabp"), 1);
	assert_int_equal(fact_u64(l, "atomic_write_power_fail_bytes"), (3 + 1) * 4096);
	assert_string_equal(lcloud_fact_get_source(lcloud_layer_find_fact(l, "atomic_write_power_fail_bytes")),
			    "nvme:id-ctrl:awupf");
	lcloud_probe_free(p);
}

static void test_ebs_shaped_torn_write_prevention(void **state)
{
	struct lcloud_probe *p = fixture_probe("nvme-crafted", "/dev/nvme1n1");
	const struct lcloud_layer *cloud = layer_of_kind(p, LCLOUD_LAYER_CLOUD);
	const uint64_t lba = 512;
	(void)state;

	assert_non_null(cloud);
	assert_string_equal(fact_str(cloud, "provider"), "aws");
	assert_string_equal(fact_str(cloud, "product"), "ebs");
	assert_string_equal(fact_str(cloud, "volume_id"), "vol0123456789abcdef0");
	assert_string_equal(fact_str(cloud, "attachment_name"), "/dev/xvdf");
	/* NTWPU 31, NTWPG 7 (0's based LBAs of 512 bytes); NTWPB 0 = no boundary */
	assert_int_equal(fact_u64(cloud, "promise_untorn_max_bytes"), (31 + 1) * lba);
	assert_int_equal(fact_u64(cloud, "promise_untorn_granularity_bytes"), (7 + 1) * lba);
	assert_int_equal(fact_u64(cloud, "promise_boundary_bytes"), 0);
	assert_string_equal(lcloud_fact_get_source(lcloud_layer_find_fact(cloud, "promise_untorn_max_bytes")),
			    "cloud:aws-ebs-twp");
	assert_non_null(strstr(fact_str(cloud, "promise_conditions"), "O_DIRECT"));
	/* the standard fields promise only one LBA: the device layer says so separately */
	assert_int_equal(fact_u64(layer_of_kind(p, LCLOUD_LAYER_NVME), "atomic_write_power_fail_bytes"), lba);
	lcloud_probe_free(p);
}

static void test_fdp_controller(void **state)
{
	struct lcloud_probe *p = fixture_probe("nvme-crafted", "/dev/nvme2n1");
	const struct lcloud_layer *l = layer_of_kind(p, LCLOUD_LAYER_NVME);
	(void)state;

	assert_int_equal(fact_u64(l, "fdp_supported"), 1);
	assert_int_equal(fact_u64(l, "directives_supported"), 1);
	assert_int_equal(fact_u64(l, "data_placement_supported"), 1);
	assert_int_equal(fact_u64(l, "streams_supported"), 0);
	assert_int_equal(fact_u64(l, "fdp_enabled"), 1);
	assert_int_equal(fact_u64(l, "fdp_reclaim_unit_handles"), 2);
	assert_int_equal(fact_u64(l, "fdp_max_placement_ids"), 2);    /* MAXPIDS 1, 0's based */
	assert_int_equal(fact_u64(l, "fdp_reclaim_unit_bytes"), 64ull << 20);
	assert_int_equal(fact_u64(l, "fdp_placement_id_count"), 2);
	assert_string_equal(fact_str(l, "fdp_placement_ids"), "0,1");
	/* placement handle 0 of this namespace reaches reclaim unit handle 1, and 1 reaches 0 */
	assert_string_equal(fact_str(l, "fdp_placement_handles"), "1,0");
	lcloud_probe_free(p);
}

static void test_truncated_failing_and_vanished(void **state)
{
	struct lcloud_probe *p;
	const struct lcloud_layer *l;
	(void)state;

	/* 100 bytes of Identify Controller: fields past byte 100 unreadable, not zero */
	p = fixture_probe("nvme-crafted", "/dev/nvme3n1");
	l = layer_of_kind(p, LCLOUD_LAYER_NVME);
	assert_int_equal(lcloud_fact_get_state(lcloud_layer_find_fact(l, "awupf")), LCLOUD_FACT_UNREADABLE);
	assert_int_equal(fact_u64(l, "vid"), 0x1b36);
	assert_int_equal(notes_with(p, NOTE_NVME_TRUNCATED, "100 of 4096"), 1);
	/* FLBAS names format 15 of 2: no sizes in bytes, and a note saying why */
	assert_int_equal(notes_with(p, NOTE_NVME_LBA_FORMAT, "FLBAS 15"), 1);
	assert_null(lcloud_layer_find_fact(l, "lba_size"));
	/* the kernel layer of the same namespace is still there */
	assert_non_null(lcloud_layer_find_fact(layer_of_kind(p, LCLOUD_LAYER_DISK), "physical_block_size"));
	lcloud_probe_free(p);

	p = fixture_probe("nvme-crafted", "/dev/nvme4n1");
	assert_int_equal(notes_with(p, NOTE_NVME_IDENTIFY_FAILED, "Invalid Field in Command"), 1);
	assert_string_equal(fact_str(layer_of_kind(p, LCLOUD_LAYER_NVME), "mn"), "Failing");
	lcloud_probe_free(p);

	p = fixture_probe("nvme-crafted", "/dev/nvme5n1");
	assert_int_equal(notes_with(p, NOTE_NVME_IDENTIFY_FAILED, "gone away"), 2);
	lcloud_probe_free(p);
}

/* Deterministic garbage: the decoders must neither crash nor read past the buffer. */
/*
 * The live transport loads libnvme on first use: with libnvme installed, a
 * namespace that does not exist fails at its node (-ENOENT), not at the
 * loading (-EOPNOTSUPP, which also means a libnvme without these functions).
 */
static void test_live_transport_loads_libnvme(void **state)
{
	struct lcloud_ctx *ctx = NULL;
	struct nvme_conn conn;
	(void)state;

	assert_int_equal(lcloud_ctx_new(&ctx), 0);
	assert_int_equal(nvme_connect(ctx, "nvme4095n4095", &conn), -ENOENT);
	lcloud_ctx_free(ctx);
}

static void test_garbage_buffers(void **state)
{
	uint8_t buf[4096];
	uint32_t seed = 12345;
	(void)state;

	for (int round = 0; round < 200; round++) {
		struct lcloud_probe *p = report_new("garbage");
		struct nvme_identity id;
		struct fdp_config cfg;
		uint16_t pids[8];
		size_t len;

		for (size_t i = 0; i < sizeof(buf); i++) {
			seed = seed * 1103515245u + 12345u;
			buf[i] = (uint8_t)(seed >> 16);
		}
		len = (seed >> 8) % sizeof(buf);
		nvme_identity_decode(&id, buf, len, buf, sizeof(buf) - len);
		assert_int_equal(report_add_layer(p, LCLOUD_LAYER_NVME, "nvme9n1", -1), 0);
		assert_int_equal(nvme_identity_fill_layer(p, 0, &id), 0);
		(void)nvme_fdp_config_decode(buf, len, buf[0] % 4, &cfg);
		assert_true(nvme_ruh_status_decode(buf, len, pids, NULL, 8) <= 8);
		lcloud_probe_free(p);
	}
	/* a log whose descriptor claims more than the buffer holds */
	memset(buf, 0, sizeof(buf));
	buf[16] = 0xff;
	buf[17] = 0xff;
	{
		struct fdp_config cfg;

		assert_int_equal(nvme_fdp_config_decode(buf, 100, 0, &cfg), -EBADMSG);
		assert_int_equal(nvme_fdp_config_decode(buf, 8, 0, &cfg), -EBADMSG);
	}
	/* a status buffer claiming 1000 descriptors in 64 bytes */
	buf[14] = 0xe8;
	buf[15] = 0x03;
	{
		uint16_t pids[8];

		assert_int_equal(nvme_ruh_status_decode(buf, 64, pids, NULL, 8), -EBADMSG);
	}
}

/* Identify Controller with the Linux cloud extension, written here from man/lcloud-extension.7. */
static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void fill_extension(uint8_t *ctrl, uint16_t version, uint16_t length, uint32_t flags)
{
	uint8_t *ext = ctrl + 3072;

	memcpy(ext, "LNXCLOUD", 8);
	ext[8] = (uint8_t)version;
	ext[9] = (uint8_t)(version >> 8);
	ext[10] = (uint8_t)length;
	ext[11] = (uint8_t)(length >> 8);
	put_le32(ext + 12, flags);
	put_le32(ext + 16, 16384);
	put_le32(ext + 20, 32768);
	put_le32(ext + 24, 4096);
	ext[28] = 3; /* three placement handles: data, journal, a reserved use */
	ext[32] = 1;
	ext[33] = 3;
	ext[34] = 9;
}

static struct lcloud_probe *probe_of_controller(const uint8_t *ctrl, size_t len)
{
	struct lcloud_probe *p = report_new("ext");
	struct nvme_identity id;

	nvme_identity_decode(&id, ctrl, len, NULL, 0);
	assert_int_equal(report_add_layer(p, LCLOUD_LAYER_NVME, "nvme0n1", -1), 0);
	assert_int_equal(nvme_identity_fill_layer(p, 0, &id), 0);
	return p;
}

static uint64_t ext_fact(const struct lcloud_probe *p, const char *name)
{
	const struct lcloud_fact *f = lcloud_layer_find_fact(lcloud_probe_get_layer(p, 0), name);

	assert_non_null(f);
	return lcloud_fact_get_u64(f);
}

static void test_linux_cloud_extension(void **state)
{
	static uint8_t ctrl[4096];
	struct lcloud_probe *p;
	const struct lcloud_fact *f;
	(void)state;

	fill_extension(ctrl, 1, 64, 0xf);
	p = probe_of_controller(ctrl, sizeof(ctrl));
	assert_int_equal(ext_fact(p, "lcloud_ext_version"), 1);
	assert_int_equal(ext_fact(p, "lcloud_ext_untorn_bytes"), 16384);
	assert_int_equal(ext_fact(p, "lcloud_ext_untorn_boundary_bytes"), 32768);
	assert_int_equal(ext_fact(p, "lcloud_ext_untorn_boundary_offset_bytes"), 4096);
	assert_int_equal(ext_fact(p, "lcloud_ext_untorn_with_cache"), 1);
	assert_int_equal(ext_fact(p, "lcloud_ext_read_ahead_hint"), 1);
	f = lcloud_layer_find_fact(lcloud_probe_get_layer(p, 0), "lcloud_ext_placement");
	assert_non_null(f);
	assert_string_equal(lcloud_fact_get_string(f), "0:data 1:journal 2:reserved");
	lcloud_probe_free(p);

	/* no untorn flag: no untorn facts; a later version with a longer block still reads as version 1 */
	fill_extension(ctrl, 2, 128, 0);
	p = probe_of_controller(ctrl, sizeof(ctrl));
	assert_int_equal(ext_fact(p, "lcloud_ext_version"), 2);
	assert_null(lcloud_layer_find_fact(lcloud_probe_get_layer(p, 0), "lcloud_ext_untorn_bytes"));
	assert_null(lcloud_layer_find_fact(lcloud_probe_get_layer(p, 0), "lcloud_ext_placement"));
	lcloud_probe_free(p);

	/* not read: a short block, version 0, another signature, a controller cut before the block ends */
	fill_extension(ctrl, 1, 32, 1);
	p = probe_of_controller(ctrl, sizeof(ctrl));
	assert_null(lcloud_layer_find_fact(lcloud_probe_get_layer(p, 0), "lcloud_ext_version"));
	lcloud_probe_free(p);
	fill_extension(ctrl, 0, 64, 1);
	p = probe_of_controller(ctrl, sizeof(ctrl));
	assert_null(lcloud_layer_find_fact(lcloud_probe_get_layer(p, 0), "lcloud_ext_version"));
	lcloud_probe_free(p);
	fill_extension(ctrl, 1, 64, 1);
	ctrl[3072] = 'l';
	p = probe_of_controller(ctrl, sizeof(ctrl));
	assert_null(lcloud_layer_find_fact(lcloud_probe_get_layer(p, 0), "lcloud_ext_version"));
	lcloud_probe_free(p);
	ctrl[3072] = 'L';
	p = probe_of_controller(ctrl, 3072 + 63);
	assert_null(lcloud_layer_find_fact(lcloud_probe_get_layer(p, 0), "lcloud_ext_version"));
	lcloud_probe_free(p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qemu_capture_matches_nvme_cli),
		cmocka_unit_test(test_azure_shaped_namespace_atomics),
		cmocka_unit_test(test_zero_namespace_field_defers_to_controller),
		cmocka_unit_test(test_ebs_shaped_torn_write_prevention),
		cmocka_unit_test(test_fdp_controller),
		cmocka_unit_test(test_truncated_failing_and_vanished),
		cmocka_unit_test(test_garbage_buffers),
		cmocka_unit_test(test_linux_cloud_extension),
		cmocka_unit_test(test_live_transport_loads_libnvme),
	};

	return fixture_main(argc, argv, "nvme", tests, sizeof(tests) / sizeof(tests[0]));
}
