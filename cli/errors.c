/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What went wrong with a path, and what to do about it, for a person and for scripts. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "escape.h"
#include "exit_codes.h"

int exit_code_for_error(int err)
{
	switch (-err) {
	case ENOENT:
	case ENOTDIR:
		return EXIT_NOT_FOUND;
	case EACCES:
	case EPERM:
		return EXIT_PERMISSION;
	case ENODEV:
	case ENXIO:
	case ENOTBLK:
	case EBADFD:
	case ELOOP:
	case EOPNOTSUPP:
		return EXIT_WRONG_KIND;
	default:
		return EXIT_FAILURE_GENERIC;
	}
}

static const char *hint_for_error(int err)
{
	switch (-err) {
	case ENOENT:
		return "check the path; lcloudctl probes existing files, directories and devices";
	case ENOTDIR:
		return "a component of the path is not a directory; check the path";
	case EACCES:
	case EPERM:
		return "a folder on the way cannot be searched by this user; run as root or as the owner";
	case ENODEV:
		return "this character device is not an NVMe generic namespace (/dev/ngXnY); "
		       "point at a block device, a file or a directory";
	case ENXIO:
		return "this NVMe namespace has no block device (unsupported format?); probe the "
		       "controller's other namespaces with 'lcloudctl list'";
	case EBADFD:
		return "FIFOs and sockets have no storage; point at a file, directory or block device";
	case ENOTBLK:
		return "list and udev take block devices (nvme0n1, /dev/sda, /dev/mapper/NAME); probe and check "
		       "take files and directories too";
	case ELOOP:
		return "the path is a symbolic link (or a loop of them); drop --no-follow or fix the link";
	case EOPNOTSUPP:
		return "under --sysroot only block devices can be probed, by name: /dev/NAME";
	default:
		return NULL;
	}
}

int report_probe_error(const char *prog, const char *path, int err)
{
	const char *hint = hint_for_error(err);

	fprintf(stderr, "%s: %s: %s\n", prog, tty_str(path), strerror(-err));
	if (hint)
		fprintf(stderr, "%s: hint: %s\n", prog, hint);
	return exit_code_for_error(err);
}

void hint_needs_root(const char *prog, const char *path, int err, bool write)
{
	if ((err != -EACCES && err != -EPERM) || geteuid() == 0)
		return;
	fprintf(stderr, "%s: hint: %s %s needs root, or a user who may %s it (ls -l %s); run it with sudo\n", prog,
		write ? "writing" : "reading", tty_str(path), write ? "write" : "read", tty_str(path));
}

json_object *probe_error_to_json(const char *path, int err)
{
	json_object *obj = json_object_new_object();
	json_object *e = json_object_new_object();
	const char *hint = hint_for_error(err);

	json_object_object_add(e, "errno", json_object_new_int(-err));
	json_object_object_add(e, "message", json_object_new_string(strerror(-err)));
	json_object_object_add(e, "hint", hint ? json_object_new_string(hint) : NULL);
	json_object_object_add(obj, "path", json_string_from_device(path));
	json_object_object_add(obj, "error", e);
	return obj;
}
