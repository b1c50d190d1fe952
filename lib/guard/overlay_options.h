/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LCLOUD_OVERLAY_OPTIONS_H
#define LCLOUD_OVERLAY_OPTIONS_H

/*
 * An overlay mount's layers, from its super options in mountinfo (after
 * mountinfo's own octal escapes are undone): "upperdir=/u,lowerdir=/l1:/l2
 * ::/data,workdir=/w,metacopy=on". overlayfs writes each layer path with a
 * backslash before ',', ':' and '\', lowerdir's layers are parted by ':'
 * and the data-only layers (reached only through a metacopy file's redirect)
 * follow "::". Pure: parsed here, fuzzed by tests/fuzz/fuzz_overlay_options.
 */
#include <stdbool.h>

#define OVERLAY_LAYERS_MAX 500 /* overlayfs's own limit on lower layers */

struct overlay_layers {
	char *upper;              /* NULL: a read-only overlay */
	char **lowers;            /* top first; the data-only layers last */
	unsigned int n_lowers;
	unsigned int first_data_only; /* index of the first data-only layer (n_lowers when none) */
	bool metacopy;            /* metacopy=on: an upper file may hold only metadata, its data below */
	bool redirect;            /* redirect_dir=on (or follow): a renamed folder's files stay under the old name */
	bool userxattr;           /* overlay's own xattrs are user.overlay.*, not trusted.overlay.* */
	bool relative;            /* some layer is a relative path (relative to the mounter's folder, unknown here) */
};

/*
 * Parses SUPER_OPTIONS into *RET. 0; -EINVAL when it names no lower layer
 * or a value is malformed (an escape at the end, an empty layer, more than
 * OVERLAY_LAYERS_MAX layers); -ENOMEM.
 */
int overlay_options_parse(const char *super_options, struct overlay_layers *ret);
void overlay_layers_free(struct overlay_layers *l);

#endif
