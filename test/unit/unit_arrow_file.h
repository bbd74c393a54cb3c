/*
 * unit_arrow_file.h — an Arrow file opened for reading through a file
 * descriptor, for the daemon's unit tests (test_gpud_*.c).
 */
#ifndef PGWARP_UNIT_ARROW_FILE_H
#define PGWARP_UNIT_ARROW_FILE_H

#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>

#include "arrow.h"

typedef struct Opened
{
	int			fd;
	ArrowFile	file;
} Opened;

static inline bool
open_file(Opened *o, const char *path)
{
	ArrowSource src;
	ArrowError	err;

	o->fd = open(path, O_RDONLY);
	if (o->fd < 0)
		return false;
	if (arrow_source_fd(&src, o->fd, path, -1, &err) != 0 ||
		arrow_open(&o->file, &src, NULL, &err) != 0)
	{
		close(o->fd);
		return false;
	}
	return true;
}

static inline void
close_file(Opened *o)
{
	arrow_close(&o->file);
	close(o->fd);
}

#endif
