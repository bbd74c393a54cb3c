/*-------------------------------------------------------------------------
 *
 * warp_gpu_stage.cu
 *	  Moving a batch to the device, for the GPU driver (see warp_gpu.cu):
 *	  pinned and registered host memory, the plan of a batch's copies
 *	  (only the byte ranges it uses), serving them from the column cache
 *	  where it holds them, and queueing the rest through the batch slot's
 *	  staging buffer on the copy stream (stage_batch, called by
 *	  warp_gpu_run_batch in warp_gpu_batch.cu).
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <stdlib.h>

#include "warp_gpu_internal.h"

/* ------------------------------------------------------ pinned memory */

extern "C" void *
warp_gpu_host_alloc(size_t size)
{
	void	   *p = NULL;
	int			dev = 0;

	if (cudaGetDevice(&dev) == cudaSuccess)
		set_blocking_sync(dev);
	else
		(void) cudaGetLastError();

	if (cudaHostAlloc(&p, size, cudaHostAllocPortable) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return NULL;
	}
	return p;
}

extern "C" void
warp_gpu_host_free(void *p)
{
	if (p)
		(void) cudaFreeHost(p);
}

extern "C" int
warp_gpu_host_register(void *p, size_t len, char *why, size_t whylen)
{
	int			dev = 0;
	int			ro = 0;
	cudaError_t e;

	if (cudaGetDevice(&dev) != cudaSuccess)
		(void) cudaGetLastError();
	set_blocking_sync(dev);
	/* a read-only mapping needs the read-only flag where the device has it */
	if (cudaDeviceGetAttribute(&ro, cudaDevAttrHostRegisterReadOnlySupported, dev) != cudaSuccess)
	{
		(void) cudaGetLastError();
		ro = 0;
	}
	if (!ro)
	{
		set_why(why, whylen, "the device cannot register read-only host memory");
		return -1;
	}
	e = cudaHostRegister(p, len, cudaHostRegisterPortable | cudaHostRegisterReadOnly);
	if (e != cudaSuccess)
	{
		cuda_ok(e, "cudaHostRegister", why, whylen);
		return -1;
	}
	return 0;
}

extern "C" void
warp_gpu_host_unregister(void *p)
{
	if (cudaHostUnregister(p) != cudaSuccess)
		(void) cudaGetLastError();
}

/* ------------------------------------------------------------ copies */

/* one array of a column: in the staging buffer, or in the column cache */
typedef struct StageCopy
{
	const void *src;
	size_t		pos;			/* in the staging buffer */
	size_t		len;
	const warp_uint8 *dptr;		/* a column cache entry's memory, or NULL */
} StageCopy;

#define NO_POS ((size_t) -1)

/* plan one copy of len bytes at src; returns its index */
static size_t
stage_add(StageCopy *copies, int *ncopies, size_t *total, const void *src, size_t len)
{
	StageCopy  *c = &copies[(*ncopies)++];

	(void) total;
	c->src = src;
	c->len = len;
	c->pos = NO_POS;
	c->dptr = NULL;
	return (size_t) (c - copies);
}

/*
 * Plan the copy of rows [0, b->length) of b: the validity bitmap and the
 * values, from the byte holding row 0's bit (bitmaps) or from the element
 * of the same rounded-down row (fixed width), so that one bit/element
 * offset, offset % 8, serves both on the device.  *vpos / *dpos receive the
 * indexes of the copies of validity and values (NO_POS: none).
 */
static void
stage_buf(WarpRowBuf *b, StageCopy *copies, int *ncopies, size_t *total,
		  size_t *vpos, size_t *dpos)
{
	warp_int64	o8 = b->offset % 8;
	warp_int64	base = b->offset - o8;
	size_t		bits_len = (size_t) ((o8 + b->length + 7) / 8);

	*vpos = NO_POS;
	*dpos = NO_POS;
	if (b->length <= 0)
		return;
	if (b->validity)
		*vpos = stage_add(copies, ncopies, total, b->validity + base / 8, bits_len);
	if (b->phys == WRP_BOOL)
		*dpos = stage_add(copies, ncopies, total, b->values + base / 8, bits_len);
	else
	{
		warp_int64	w = warp_row_phys_bytes(b->phys, 1);

		*dpos = stage_add(copies, ncopies, total, b->values + base * w,
						  (size_t) ((o8 + b->length) * w));
	}
	b->offset = o8;
}

/* the device address of copy ci */
static const warp_uint8 *
stage_addr(const BatchSlot *bs, const StageCopy *copies, size_t ci)
{
	if (ci == NO_POS)
		return NULL;
	return copies[ci].dptr ? copies[ci].dptr : bs->d_stage + copies[ci].pos;
}

/*
 * Serve copy c from the column cache if it lies in one of the batch's
 * decompressed buffers or in the file's mapping: a hit makes the compute
 * stream wait for the entry's fill; a miss copies into a new entry on the
 * copy stream (a decompressed buffer whole, whatever part of it c is).
 * false only on a CUDA error, or a ghost range the cache cannot serve.
 */
static bool
cache_copy(WarpGpu *g, BatchSlot *bs, StageCopy *c, const WarpGpuFile *file,
		   char *why, size_t whylen)
{
	const warp_uint8 *src = (const warp_uint8 *) c->src;
	const GpudDecodedBuf *db;
	const warp_uint8 *from;		/* what the entry holds a copy of */
	warp_uint64 size = 0;
	GpudColCacheOps ops;
	GpudColKey	key;
	GpudColEntry *e;
	bool		fill;

	if (file == NULL || c->len == 0)
		return true;
	db = gpud_decoded_find(file->decoded, src, c->len);
	if (db && db->ghost)
	{
		/* nothing is at src: the entry the batch's load found holds it */
		if (g->cache == NULL || db->held == NULL)
		{
			set_why(why, whylen, "a cached decompressed buffer is not in this GPU's column cache");
			return false;
		}
		e = db->held;
		gpud_colcache_ref(g->cache, e);
		fill = false;
		from = db->host;
	}
	else
	{
		if (g->cache == NULL)
			return true;
		if (db)
		{
			key = db->key;
			from = db->host;
			size = db->len;
		}
		else if (file->base != NULL && src >= file->base &&
				 src + c->len <= file->base + file->len)
		{
			key = file->id;
			key.off = (warp_uint64) (src - file->base);
			key.len = c->len;
			key.kind = GPUD_COL_RAW;
			from = src;
			size = c->len;
		}
		else
			return true;
		ops.alloc = cache_alloc;
		ops.free = cache_free;
		ops.ctx = g;
		e = gpud_colcache_get_sized(g->cache, &key, size, &ops, &fill);
		if (e == NULL)
			return true;		/* staged as usual */
	}
	if (fill)
	{
		cudaEvent_t ev = NULL;

		if (!CUDA_OK(cudaMemcpyAsync(e->ptr, from, size, cudaMemcpyHostToDevice,
									 g->copy_stream)) ||
			!CUDA_OK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)) ||
			!CUDA_OK(cudaEventRecord(ev, g->copy_stream)))
		{
			if (ev)
				(void) cudaEventDestroy(ev);
			gpud_colcache_abandon(g->cache, e, &ops);
			return false;
		}
		gpud_colcache_filled(g->cache, e, ev);
		g->bytes += (warp_int64) size;
	}
	else
	{
		/* filled by an earlier batch, maybe of another query, maybe still
		 * copying: the kernel waits for it */
		if (!CUDA_OK(cudaStreamWaitEvent(g->stream, (cudaEvent_t) e->ready, 0)))
		{
			gpud_colcache_release(g->cache, e);
			return false;
		}
		g->cached_bytes += (warp_int64) c->len;
	}
	bs->cents[bs->ncents++] = e;
	c->dptr = (const warp_uint8 *) e->ptr + (src - from);
	return true;
}

/* ------------------------------------------------------------- a batch */

/*
 * Describe every column of the batch into the slot's descriptors and plan
 * the copies of its arrays (pos: 4 per column, validity and values of the
 * data, then of the dictionary).
 */
static bool
describe_columns(const WarpProgram *p, BatchSlot *bs, const ArrowArray *cols,
				 warp_int64 nrows, StageCopy *copies, int *ncopies, size_t *total,
				 size_t *pos, char *why, size_t whylen)
{
	int			c;

	for (c = 0; c < p->ncols; c++)
	{
		WarpRowCol *rc = &bs->h_cols[c];
		const char *bad = warp_row_describe(&cols[c], &p->cols[c], nrows, rc);

		if (bad)
		{
			set_why(why, whylen, "column %d: %s", c, bad);
			return false;
		}
		stage_buf(&rc->data, copies, ncopies, total, &pos[4 * c], &pos[4 * c + 1]);
		pos[4 * c + 2] = pos[4 * c + 3] = NO_POS;
		if (rc->has_dict)
			stage_buf(&rc->dict, copies, ncopies, total, &pos[4 * c + 2], &pos[4 * c + 3]);
	}
	return true;
}

/*
 * Serve each copy from the column cache where it can; give the others
 * their place in the slot's staging buffer (*total: its bytes used),
 * which grows to hold them.
 */
static bool
place_copies(WarpGpu *g, BatchSlot *bs, StageCopy *copies, int ncopies, size_t *total,
			 const WarpGpuFile *file, char *why, size_t whylen)
{
	int			i;

	/* the column cache first; what it does not hold goes to staging */
	if (!CUDA_OK(cudaEventRecord(bs->ev_copy0, g->copy_stream)))
		return false;
	for (i = 0; i < ncopies; i++)
		if (!cache_copy(g, bs, &copies[i], file, why, whylen))
			return false;
	for (i = 0; i < ncopies; i++)
		if (copies[i].dptr == NULL)
		{
			copies[i].pos = align_up(*total, STAGE_ALIGN);
			*total = copies[i].pos + copies[i].len;
		}
	if (*total > bs->stage_size)
	{
		size_t		size = align_up(*total + *total / 4, (size_t) 1 << 20);

		dev_free(g, bs->d_stage, bs->stage_size);
		bs->d_stage = NULL;
		bs->stage_size = 0;
		if (!dev_malloc(g, (void **) &bs->d_stage, size, why, whylen))
			return false;
		bs->stage_size = size;
	}
	return true;
}

bool
stage_batch(WarpGpu *g, BatchSlot *bs, const ArrowArray *cols, warp_int64 nrows,
			const WarpGpuFile *file, char *why, size_t whylen)
{
	const WarpProgram *p = g->prog;
	StageCopy  *copies = NULL;
	size_t	   *pos = NULL;
	int			ncopies = 0;
	size_t		total = 0;
	int			c,
				i;

	copies = (StageCopy *) malloc(sizeof(StageCopy) * 4 * (p->ncols + 1));
	pos = (size_t *) malloc(sizeof(size_t) * 4 * (p->ncols + 1));
	if (copies == NULL || pos == NULL)
	{
		set_why(why, whylen, "out of memory");
		goto fail_free;
	}
	if (!describe_columns(p, bs, cols, nrows, copies, &ncopies, &total, pos, why, whylen) ||
		!place_copies(g, bs, copies, ncopies, &total, file, why, whylen))
		goto fail_free;
	for (c = 0; c < p->ncols; c++)
	{
		WarpRowCol *rc = &bs->h_cols[c];

		rc->data.validity = stage_addr(bs, copies, pos[4 * c]);
		rc->data.values = stage_addr(bs, copies, pos[4 * c + 1]);
		rc->dict.validity = stage_addr(bs, copies, pos[4 * c + 2]);
		rc->dict.values = stage_addr(bs, copies, pos[4 * c + 3]);
	}

	/* queue the copies: the column bytes, then their descriptors */
	for (i = 0; i < ncopies; i++)
		if (copies[i].len > 0 && copies[i].dptr == NULL &&
			!CUDA_OK(cudaMemcpyAsync(bs->d_stage + copies[i].pos, copies[i].src, copies[i].len,
									 cudaMemcpyHostToDevice, g->copy_stream)))
			goto fail_free;
	free(copies);
	free(pos);
	if (!CUDA_OK(cudaMemcpyAsync(bs->d_cols, bs->h_cols, sizeof(WarpRowCol) * p->ncols,
								 cudaMemcpyHostToDevice, g->copy_stream)) ||
		!CUDA_OK(cudaEventRecord(bs->ev_copy1, g->copy_stream)))
		return false;
	g->bytes += (warp_int64) total;
	return true;

fail_free:
	free(copies);
	free(pos);
	return false;
}
