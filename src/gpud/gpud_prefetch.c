/*-------------------------------------------------------------------------
 *
 * gpud_prefetch.c
 *	  Loading a part's record batches of one Arrow file ahead (see
 *	  gpud_prefetch.h).
 *
 * Slots are claimed in list order (next), by a helper thread or by the
 * taker when it reaches a slot nobody claimed; at most `depth` claimed
 * slots are not yet released, which bounds the memory held.
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "gpud_prefetch.h"

typedef enum SlotState
{
	SLOT_FREE,					/* not claimed yet */
	SLOT_LOADING,
	SLOT_READY,
	SLOT_TAKEN,
	SLOT_RELEASED
} SlotState;

struct GpudPrefetch
{
	ArrowFile  *file;
	const int32_t *batches;
	int			n;
	const int32_t *fields;
	int			ncols;
	const ArrowAllocator *alloc;
	GpudLoadHook hook;			/* load NULL: arrow_load_column */
	int			depth;

	pthread_mutex_t mu;
	pthread_cond_t cv;
	int			next;			/* next slot to claim */
	int			held;			/* claimed, not released */
	bool		stop;
	SlotState  *state;
	GpudLoaded *slots;
	ArrowArray *cols;			/* n * ncols */

	pthread_t  *threads;
	int			nthreads;
};

/* load slot i (outside the lock) */
static void
load_slot(GpudPrefetch *pf, int i)
{
	GpudLoaded *l = &pf->slots[i];
	int			b = pf->batches[i];
	int			c;

	arrow_arena_init(&l->arena, pf->alloc);
	l->cols = pf->cols + (size_t) i * pf->ncols;
	l->status = 0;
	l->state = NULL;
	if (arrow_read_batch_meta(pf->file, b, &l->arena, &l->meta, &l->err) != 0)
	{
		l->status = -1;
		return;
	}
	for (c = 0; c < pf->ncols; c++)
	{
		if (pf->fields[c] < 0 || pf->fields[c] >= pf->file->schema.n_fields)
		{
			arrow_error(&l->err, ARROW_ERR_INVALID, -1, "Arrow file \"%s\" has no field %d",
						pf->file->src.name, pf->fields[c]);
			l->status = -1;
			return;
		}
		if ((pf->hook.load ?
			 pf->hook.load(pf->hook.ctx, pf->file, b, &l->meta, pf->fields[c], &l->arena,
						   &l->cols[c], &l->state, &l->err) :
			 arrow_load_column(pf->file, b, &l->meta, pf->fields[c], &l->arena,
							   &l->cols[c], &l->err)) != 0)
		{
			l->status = -1;
			return;
		}
	}
}

/* free a loaded batch's memory */
static void
free_slot(GpudPrefetch *pf, GpudLoaded *l)
{
	if (l->state && pf->hook.done)
		pf->hook.done(pf->hook.ctx, l->state);
	l->state = NULL;
	arrow_arena_free_all(&l->arena);
}

/* claim the next slot (lock held) */
static int
claim_next(GpudPrefetch *pf)
{
	int			i = pf->next++;

	pf->held++;
	pf->state[i] = SLOT_LOADING;
	return i;
}

/* a helper's claim: the next slot if the depth allows (lock held), or -1 */
static int
claim(GpudPrefetch *pf)
{
	if (pf->stop || pf->next >= pf->n || pf->held >= pf->depth)
		return -1;
	return claim_next(pf);
}

static void *
helper_main(void *arg)
{
	GpudPrefetch *pf = arg;

	pthread_mutex_lock(&pf->mu);
	while (!pf->stop && pf->next < pf->n)
	{
		int			i = claim(pf);

		if (i < 0)
		{
			pthread_cond_wait(&pf->cv, &pf->mu);
			continue;
		}
		pthread_mutex_unlock(&pf->mu);
		load_slot(pf, i);
		pthread_mutex_lock(&pf->mu);
		pf->state[i] = SLOT_READY;
		pthread_cond_broadcast(&pf->cv);
	}
	pthread_mutex_unlock(&pf->mu);
	return NULL;
}

void
gpud_prefetch_shape(long ncpu, int nparts, uint64_t batch_bytes, uint64_t avail,
					int *nthreads, int *depth)
{
	int			t = ncpu > 0 && nparts > 0 ? (int) (ncpu / nparts) : 1;
	int			d;
	uint64_t	cap = avail < GPUD_PREFETCH_BYTES ? avail : GPUD_PREFETCH_BYTES;

	if (t < 1)
		t = 1;
	if (t > GPUD_PREFETCH_THREADS)
		t = GPUD_PREFETCH_THREADS;
	d = 2 * t + 1;
	if (batch_bytes == 0)
		batch_bytes = 1;
	if ((uint64_t) d * batch_bytes > cap)
		d = (int) (cap / batch_bytes);
	if (d < 2)
		d = 2;
	if (t > d)
		t = d;
	*nthreads = t;
	*depth = d;
}

bool
gpud_prefetch_wanted(const ArrowFile *file, const ArrowBatchMeta *meta,
					 const int32_t *fields, int ncols)
{
	int			c;

	if (meta->codec == ARROW_CODEC_NONE)
		return false;
	for (c = 0; c < ncols; c++)
	{
		const ArrowField *f;

		if (fields[c] < 0 || fields[c] >= file->schema.n_fields)
			return false;
		f = &file->schema.fields[fields[c]];
		if (f->has_dict || f->n_children != 0)
			return false;
	}
	return true;
}

GpudPrefetch *
gpud_prefetch_start(ArrowFile *file, const int32_t *batches, int n,
					const int32_t *fields, int ncols, const ArrowAllocator *alloc,
					const GpudLoadHook *hook, int nthreads, int depth)
{
	GpudPrefetch *pf = calloc(1, sizeof(GpudPrefetch));
	sigset_t	all,
				old;
	int			t;

	if (pf == NULL)
		return NULL;
	pf->file = file;
	pf->batches = batches;
	pf->n = n;
	pf->fields = fields;
	pf->ncols = ncols;
	pf->alloc = alloc;
	if (hook)
		pf->hook = *hook;
	pf->depth = depth > 0 ? depth : 1;
	pf->state = calloc(n > 0 ? n : 1, sizeof(SlotState));
	pf->slots = calloc(n > 0 ? n : 1, sizeof(GpudLoaded));
	pf->cols = calloc((size_t) (n > 0 ? n : 1) * (ncols > 0 ? ncols : 1), sizeof(ArrowArray));
	if (nthreads > n)
		nthreads = n;
	if (nthreads > 0)
		pf->threads = calloc(nthreads, sizeof(pthread_t));
	if (pf->state == NULL || pf->slots == NULL || pf->cols == NULL ||
		(nthreads > 0 && pf->threads == NULL))
	{
		free(pf->state);
		free(pf->slots);
		free(pf->cols);
		free(pf->threads);
		free(pf);
		return NULL;
	}
	pthread_mutex_init(&pf->mu, NULL);
	pthread_cond_init(&pf->cv, NULL);
	/* the threads block every signal (the daemon's own handlers stay on
	 * its main thread's terms) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (t = 0; t < nthreads; t++)
		if (pthread_create(&pf->threads[pf->nthreads], NULL, helper_main, pf) == 0)
			pf->nthreads++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return pf;
}

GpudLoaded *
gpud_prefetch_take(GpudPrefetch *pf, int i)
{
	GpudLoaded *l = &pf->slots[i];

	pthread_mutex_lock(&pf->mu);
	while (pf->state[i] != SLOT_READY)
	{
		/* nobody claimed it (no helper, or all busy): load it here */
		if (pf->state[i] == SLOT_FREE && pf->next == i)
		{
			(void) claim_next(pf);
			pthread_mutex_unlock(&pf->mu);
			load_slot(pf, i);
			pthread_mutex_lock(&pf->mu);
			pf->state[i] = SLOT_READY;
			break;
		}
		pthread_cond_wait(&pf->cv, &pf->mu);
	}
	pf->state[i] = SLOT_TAKEN;
	pthread_mutex_unlock(&pf->mu);
	return l;
}

void
gpud_prefetch_release(GpudPrefetch *pf, GpudLoaded *l)
{
	int			i = (int) (l - pf->slots);

	free_slot(pf, l);
	pthread_mutex_lock(&pf->mu);
	pf->state[i] = SLOT_RELEASED;
	pf->held--;
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
}

void
gpud_prefetch_stop(GpudPrefetch *pf)
{
	int			i;

	if (pf == NULL)
		return;
	pthread_mutex_lock(&pf->mu);
	pf->stop = true;
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
	for (i = 0; i < pf->nthreads; i++)
		pthread_join(pf->threads[i], NULL);
	/* loaded or taken, never released: free (a load never began: nothing) */
	for (i = 0; i < pf->n; i++)
		if (pf->state[i] == SLOT_READY || pf->state[i] == SLOT_TAKEN)
			free_slot(pf, &pf->slots[i]);
	pthread_cond_destroy(&pf->cv);
	pthread_mutex_destroy(&pf->mu);
	free(pf->threads);
	free(pf->state);
	free(pf->slots);
	free(pf->cols);
	free(pf);
}
