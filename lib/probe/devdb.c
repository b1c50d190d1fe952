/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The udev device database: the stable names (serial, WWN, by-path) that
 * people use to tell disks apart. Machines without udevd have an empty
 * database; then nothing is added and sysfs identifiers stand alone.
 */
#include <errno.h>
#include <libudev.h>
#include <stdio.h>
#include <string.h>

#include "devdb.h"
#include "util.h"

int devdb_add_identifiers(const struct lcloud_ctx *ctx, struct lcloud_probe *p)
{
	static const struct {
		const char *property;
		enum fact_id id;
	} props[] = {
		{ "ID_SERIAL", FACT_UDEV_ID_SERIAL },
		{ "ID_WWN", FACT_UDEV_ID_WWN },
		{ "ID_PATH", FACT_UDEV_ID_PATH },
		{ "ID_MODEL", FACT_UDEV_ID_MODEL },
	};
	struct udev *udev;
	int r = 0;

	if (ctx_has_sysroot(ctx))
		return 0;
	udev = udev_new();
	if (!udev)
		return 0;
	for (unsigned int i = 0; i < p->n_layers && r >= 0; i++) {
		struct lcloud_layer *l = &p->layers[i];
		struct udev_device *dev;

		if (l->kind != LCLOUD_LAYER_DISK)
			continue;
		dev = udev_device_new_from_subsystem_sysname(udev, "block", l->name);
		if (!dev)
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(props) && r >= 0; k++) {
			const char *v = udev_device_get_property_value(dev, props[k].property);

			if (v && *v)
				r = layer_add_string(l, props[k].id, v, "udev");
		}
		udev_device_unref(dev);
	}
	udev_unref(udev);
	return r;
}
