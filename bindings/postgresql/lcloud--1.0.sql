/* SPDX-License-Identifier: LGPL-2.1-or-later */
\echo Use "CREATE EXTENSION lcloud" to load this file. \quit

-- Is an aligned SIZE-byte write to PATH untorn on power loss, on IO_PATH
-- (rwf_atomic, passthrough, plain_direct, buffered, best; NULL: the path
-- this server writes data pages with)? One row; a path that cannot be
-- probed gives the answer 'unknown' with its reason.
CREATE FUNCTION lcloud_check(INOUT path text,
                             INOUT size int DEFAULT current_setting('block_size')::int,
                             INOUT io_path text DEFAULT NULL,
                             OUT answer text,
                             OUT max_untorn_bytes bigint, OUT reason text, OUT evidence text[],
                             OUT filesystem text, OUT mount_point text, OUT device text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'lcloud_check'
LANGUAGE C VOLATILE;

-- Every place this server writes pages (the data directory, each
-- tablespace, pg_wal) with its page size, on the path it writes them with.
CREATE FUNCTION lcloud_datadir(OUT kind text, OUT tablespace text,
                               OUT path text, OUT size int, OUT io_path text, OUT answer text,
                               OUT max_untorn_bytes bigint, OUT reason text, OUT evidence text[],
                               OUT filesystem text, OUT mount_point text, OUT device text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'lcloud_datadir'
LANGUAGE C VOLATILE;

-- lcloud_check() probes any path the server's operating system user can
-- reach; lcloud_datadir() shows where the data lives.
REVOKE ALL ON FUNCTION lcloud_check(text, int, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION lcloud_check(text, int, text) TO pg_read_server_files;
REVOKE ALL ON FUNCTION lcloud_datadir() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION lcloud_datadir() TO pg_monitor;
