/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pure parts of "who else holds this file" and "tell me when my
 * storage gains a user": the fdinfo and maps lines the scan reads, the
 * uevent messages the watch reads (hand-made and as the kernel sends
 * them), the scan itself over a /proc tree built here (a process holding
 * the file, one holding another file with the same inode number on
 * another device, one mapping it, this process's own descriptor left out),
 * the lease answer on a file this test holds itself, and the watch seeing
 * a broken lease without any signal reaching the process.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "held_file.h"
#include "watch.h"

static void test_fdinfo_ino(void **state)
{
	static const char real[] = "pos:\t0\nflags:\t0100002\nmnt_id:\t26\nino:\t10960972\n";
	static const char epoll[] = "pos:\t0\nflags:\t02\nmnt_id:\t16\nino:\t1057\ntfd:        5 events:       19\n";
	uint64_t ino = 0;
	(void)state;

	assert_int_equal(held_parse_fdinfo_ino(real, strlen(real), &ino), 0);
	assert_int_equal(ino, 10960972);
	assert_int_equal(held_parse_fdinfo_ino(epoll, strlen(epoll), &ino), 0);
	assert_int_equal(ino, 1057);
	/* cut short before the number ends: what read() returned is all there is */
	assert_int_equal(held_parse_fdinfo_ino(real, strlen(real) - 3, &ino), 0);
	assert_int_equal(ino, 109609);
	/* no field, an empty one, a sign, trailing text, 21 digits: never a number made up */
	assert_int_equal(held_parse_fdinfo_ino("pos:\t0\nflags:\t02\n", 17, &ino), -ENOENT);
	assert_int_equal(held_parse_fdinfo_ino("ino:\t\n", 6, &ino), -ENOENT);
	assert_int_equal(held_parse_fdinfo_ino("ino:\t-5\n", 8, &ino), -ENOENT);
	assert_int_equal(held_parse_fdinfo_ino("ino:\t12x\n", 9, &ino), -ENOENT);
	assert_int_equal(held_parse_fdinfo_ino("ino:\t184467440737095516150\n", 27, &ino), -ENOENT);
	/* "inotify" lines do not count as "ino:" */
	assert_int_equal(held_parse_fdinfo_ino("inotify wd:1 ino:99 sdev:7\n", 27, &ino), -ENOENT);
}

static void test_maps_line(void **state)
{
	static const char line[] = "7f1c2a000000-7f1c2a021000 rw-s 00004000 fd:01 10960972   /var/lib/mysql/ib_logfile0\n";
	unsigned int maj, min;
	uint64_t ino;
	(void)state;

	assert_int_equal(held_parse_maps_line(line, strlen(line), &maj, &min, &ino), 0);
	assert_int_equal(maj, 0xfd);
	assert_int_equal(min, 1);
	assert_int_equal(ino, 10960972);
	/* an anonymous mapping: device 00:00, inode 0 */
	{
		static const char anon[] = "7ffd1000-7ffd2000 rw-p 00000000 00:00 0 [stack]";

		assert_int_equal(held_parse_maps_line(anon, strlen(anon), &maj, &min, &ino), 0);
	}
	assert_int_equal(ino, 0);
	/* a path longer than the buffer is not needed */
	{
		char longline[600];

		snprintf(longline, sizeof(longline), "10-20 r--p 00000000 08:02 77 /%0500d", 0);
		assert_int_equal(held_parse_maps_line(longline, strlen(longline), &maj, &min, &ino), 0);
		assert_int_equal(ino, 77);
	}
	assert_int_equal(held_parse_maps_line("garbage", 7, &maj, &min, &ino), -EINVAL);
	assert_int_equal(held_parse_maps_line("10-20 r--p 0 08:02", 18, &maj, &min, &ino), -EINVAL);
	assert_int_equal(held_parse_maps_line("10-20 r--p 0 08:02 77x /a", 25, &maj, &min, &ino), -EINVAL);
	assert_int_equal(held_parse_maps_line("10-20 r--p 0 08:02 7\0 /a", 24, &maj, &min, &ino), -EINVAL);
}

static void test_uevent_messages(void **state)
{
	/* as the kernel sends a loop device's change (LOOP_CONFIGURE) */
	static const char loop[] = "change@/devices/virtual/block/loop7\0ACTION=change\0DEVPATH=/devices/virtual/block/loop7\0"
				   "SUBSYSTEM=block\0DISK_MEDIA_CHANGE=1\0MAJOR=7\0MINOR=448\0DEVNAME=loop7\0DEVTYPE=disk\0"
				   "DISKSEQ=88\0SEQNUM=5120";
	static const char net[] = "add@/devices/virtual/net/veth0\0ACTION=add\0SUBSYSTEM=net\0INTERFACE=veth0\0";
	static const char tricky[] = "add@/x\0SUBSYSTEM=blocks\0XSUBSYSTEM=block\0DEVPATH=SUBSYSTEM=block/a\0";
	(void)state;

	assert_true(uevent_is_block(loop, sizeof(loop) - 1));
	assert_false(uevent_is_block(net, sizeof(net) - 1));
	assert_false(uevent_is_block(tricky, sizeof(tricky) - 1));
	/* the last pair without its NUL, and a message cut inside the key */
	assert_true(uevent_is_block("add@/x\0SUBSYSTEM=block", 22));
	assert_false(uevent_is_block("add@/x\0SUBSYSTEM=blo", 20));
	assert_false(uevent_is_block("", 0));
}

/* DIR/proc/PID/{comm,fd/N,fdinfo/N} of a process that has TARGET open at descriptor N with fdinfo INO. */
static void fake_process(const char *dir, int pid, const char *comm, int fd, const char *target, uint64_t ino)
{
	char path[4300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", dir, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/fd", dir, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/fdinfo", dir, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/comm", dir, pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", comm);
	fclose(f);
	if (fd < 0)
		return;
	snprintf(path, sizeof(path), "%s/%d/fd/%d", dir, pid, fd);
	assert_int_equal(symlink(target, path), 0);
	snprintf(path, sizeof(path), "%s/%d/fdinfo/%d", dir, pid, fd);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "pos:\t0\nflags:\t0100002\nmnt_id:\t26\nino:\t%" PRIu64 "\n", ino);
	fclose(f);
}

static void test_scan_over_a_built_proc(void **state)
{
	char dir[] = "/tmp/lcloud-held-XXXXXX", proc[64], data[128], maps[128], text[512];
	struct held_scan s;
	struct stat st;
	FILE *f;
	int fd;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	snprintf(data, sizeof(data), "%s/ibdata1", dir);
	mkdir(proc, 0755);
	fd = open(data, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	fake_process(proc, 4242, "mariadbd", 9, data, st.st_ino);
	/* the same inode number but another file (as on another device): statx tells them apart */
	fake_process(proc, 5000, "other", 3, "/dev/null", st.st_ino);
	/* a process whose fdinfo names the inode but whose link is gone */
	fake_process(proc, 5001, "gone", 4, "/nonexistent", st.st_ino);
	/* the scanning process itself, through its own descriptor: left out */
	fake_process(proc, 77, "self", 5, data, st.st_ino);
	/* a mapping only */
	fake_process(proc, 6000, "mapper", -1, NULL, 0);
	snprintf(maps, sizeof(maps), "%s/6000/maps", proc);
	f = fopen(maps, "w");
	assert_non_null(f);
	fprintf(f, "55d0-55d1 r--p 00000000 00:00 0\n7f00-7f10 rw-s 00000000 %x:%x %" PRIu64 " %s\n",
		major(st.st_dev), minor(st.st_dev), (uint64_t)st.st_ino, data);
	fclose(f);

	assert_int_equal(held_file_scan(proc, st.st_dev, st.st_ino, 77, 5, &s), 0);
	assert_int_equal(s.n_holders, 2);
	held_scan_describe(&s, text, sizeof(text));
	assert_non_null(strstr(text, "mariadbd (pid 4242, fd 9)"));
	assert_non_null(strstr(text, "mapper (pid 6000, mapped)"));
	assert_null(strstr(text, "other"));
	assert_null(strstr(text, "self"));
	assert_false(s.incomplete);

	/* no such tree: an error, never "nobody" */
	assert_int_equal(held_file_scan("/nonexistent-proc", st.st_dev, st.st_ino, 77, 5, &s), -ENOENT);
	close(fd);
	{
		char cmd[200];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		assert_int_equal(system(cmd), 0);
	}
}

/* A child that opens PATH and says so on the pipe; killed by the caller. */
static pid_t hold_open(const char *path, int flags)
{
	int p[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(path, flags);

		if (write(p[1], fd >= 0 ? "y" : "n", 1) != 1 || fd < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	assert_int_equal(c, 'y');
	close(p[0]);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_lease_answers(void **state)
{
	char dir[] = "/tmp/lcloud-held-XXXXXX", data[128], why[2048];
	int fd, dup_fd, other, r;
	pid_t child;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(data, sizeof(data), "%s/f", dir);
	fd = open(data, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);

	/* alone, and with a duplicate of its own descriptor: free */
	dup_fd = dup(fd);
	assert_int_equal(held_file_check(fd, data, false, "stop it first", why, sizeof(why)), HELD_FREE_LEASED);
	close(dup_fd);

	/* another descriptor of this very process: held, and named as this process */
	other = open(data, O_RDONLY | O_CLOEXEC);
	r = held_file_check(fd, data, false, "stop it first", why, sizeof(why));
	assert_int_equal(r, -EBUSY);
	assert_non_null(strstr(why, "this process itself"));
	close(other);

	/* another process, read-only: held, named by its pid */
	child = hold_open(data, O_RDONLY);
	r = held_file_check(fd, data, false, "stop it first", why, sizeof(why));
	reap(child);
	assert_int_equal(r, -EBUSY);
	{
		char pid[32];

		snprintf(pid, sizeof(pid), "(pid %d, fd ", (int)child);
		assert_non_null(strstr(why, pid));
		assert_non_null(strstr(why, "stop it first"));
	}
	close(fd);
	unlink(data);
	rmdir(dir);
}

static volatile sig_atomic_t signals_seen;

static void count_signal(int sig)
{
	(void)sig;
	signals_seen++;
}

static void test_watch_sees_a_broken_lease_without_a_signal(void **state)
{
	struct storage_watch w = STORAGE_WATCH_INIT;
	char dir[] = "/tmp/lcloud-held-XXXXXX", data[128], why[1024];
	struct sigaction sa = { .sa_handler = count_signal }, old_io, old_urg;
	pid_t child;
	int fd, status;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(data, sizeof(data), "%s/f", dir);
	fd = open(data, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	sigaction(SIGIO, &sa, &old_io);
	sigaction(SIGURG, &sa, &old_urg);
	assert_int_equal(held_file_check(fd, data, true, "stop it first", why, sizeof(why)), HELD_FREE_LEASED);
	assert_int_equal(storage_watch_start(&w, fd, false), 0);
	assert_int_equal(storage_watch_poll(&w), WATCH_QUIET);

	/* a writer opens it: its open waits for the lease, the watch says so, no signal comes */
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(open(data, O_WRONLY) >= 0 ? 0 : 1);
	for (int i = 0; i < 500 && storage_watch_poll(&w) == WATCH_QUIET; i++)
		usleep(10000);
	assert_int_equal(storage_watch_poll(&w), WATCH_LEASE_BROKEN_WRITE);
	assert_int_equal(waitpid(child, &status, WNOHANG), 0); /* still waiting in open() */
	storage_watch_release(&w);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(signals_seen, 0);
	storage_watch_free(&w);
	sigaction(SIGIO, &old_io, NULL);
	sigaction(SIGURG, &old_urg, NULL);
	close(fd);
	unlink(data);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fdinfo_ino),
		cmocka_unit_test(test_maps_line),
		cmocka_unit_test(test_uevent_messages),
		cmocka_unit_test(test_scan_over_a_built_proc),
		cmocka_unit_test(test_lease_answers),
		cmocka_unit_test(test_watch_sees_a_broken_lease_without_a_signal),
	};

	(void)argc;
	(void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
