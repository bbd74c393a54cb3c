/*
 * ssb_gen.c — Star Schema Benchmark data generator core.
 *
 * See ssb_gen.h for the model (units, random streams, distributions).  This
 * file only generates rows into column chunks and formats them as .tbl text;
 * threads, files and Arrow writing live in cmd_ssb.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgwarp.h"
#include "ssb_gen.h"

/* ------------------------------------------------------------- schema */

#define INT(n)		{n, 0, "integer"}
#define STR(n, len)	{n, len, "character varying(" #len ")"}

static const SsbColumn lineorder_cols[] = {
	INT("lo_orderkey"),
	INT("lo_linenumber"),
	INT("lo_custkey"),
	INT("lo_partkey"),
	INT("lo_suppkey"),
	INT("lo_orderdate"),
	STR("lo_orderpriority", 15),
	INT("lo_shippriority"),
	INT("lo_quantity"),
	INT("lo_extendedprice"),
	INT("lo_ordtotalprice"),
	INT("lo_discount"),
	INT("lo_revenue"),
	INT("lo_supplycost"),
	INT("lo_tax"),
	INT("lo_commitdate"),
	STR("lo_shipmode", 10),
};

/*
 * Addresses: the paper says 25 characters, but dbgen (like TPC-H) writes
 * random strings of 10 to 40 characters; varchar(40) loads either.
 */
static const SsbColumn customer_cols[] = {
	INT("c_custkey"),
	STR("c_name", 25),
	STR("c_address", 40),
	STR("c_city", 10),
	STR("c_nation", 15),
	STR("c_region", 12),
	STR("c_phone", 15),
	STR("c_mktsegment", 10),
};

static const SsbColumn supplier_cols[] = {
	INT("s_suppkey"),
	STR("s_name", 25),
	STR("s_address", 40),
	STR("s_city", 10),
	STR("s_nation", 15),
	STR("s_region", 12),
	STR("s_phone", 15),
};

static const SsbColumn part_cols[] = {
	INT("p_partkey"),
	STR("p_name", 22),
	STR("p_mfgr", 6),
	STR("p_category", 7),
	STR("p_brand1", 9),
	STR("p_color", 11),
	STR("p_type", 25),
	INT("p_size"),
	STR("p_container", 10),
};

/* d_dayofweek: the paper says 8, but "Wednesday" has 9 characters. */
static const SsbColumn date_cols[] = {
	INT("d_datekey"),
	STR("d_date", 18),
	STR("d_dayofweek", 9),
	STR("d_month", 9),
	INT("d_year"),
	INT("d_yearmonthnum"),
	STR("d_yearmonth", 7),
	INT("d_daynuminweek"),
	INT("d_daynuminmonth"),
	INT("d_daynuminyear"),
	INT("d_monthnuminyear"),
	INT("d_weeknuminyear"),
	STR("d_sellingseason", 12),
	INT("d_lastdayinweekfl"),
	INT("d_lastdayinmonthfl"),
	INT("d_holidayfl"),
	INT("d_weekdayfl"),
};

#define NCOLS(a) ((int) (sizeof(a) / sizeof((a)[0])))

const SsbTableInfo ssb_tables[SSB_N_TABLES] = {
	{"lineorder", NCOLS(lineorder_cols), lineorder_cols, "lo_orderkey, lo_linenumber"},
	{"customer", NCOLS(customer_cols), customer_cols, "c_custkey"},
	{"supplier", NCOLS(supplier_cols), supplier_cols, "s_suppkey"},
	{"part", NCOLS(part_cols), part_cols, "p_partkey"},
	{"date", NCOLS(date_cols), date_cols, "d_datekey"},
};

/* ---------------------------------------------------------- value domains */

static const char *const nations[25] = {
	"ALGERIA", "ARGENTINA", "BRAZIL", "CANADA", "EGYPT", "ETHIOPIA", "FRANCE",
	"GERMANY", "INDIA", "INDONESIA", "IRAN", "IRAQ", "JAPAN", "JORDAN",
	"KENYA", "MOROCCO", "MOZAMBIQUE", "PERU", "CHINA", "ROMANIA",
	"SAUDI ARABIA", "VIETNAM", "RUSSIA", "UNITED KINGDOM", "UNITED STATES"
};

/* region of each nation (TPC-H's n_regionkey) */
static const int nation_region[25] = {
	0, 1, 1, 1, 4, 0, 3, 3, 2, 2, 4, 4, 2, 4, 0, 0, 0, 1, 2, 3, 4, 2, 3, 3, 1
};

static const char *const regions[5] = {
	"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"
};

static const char *const segments[5] = {
	"AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"
};

static const char *const priorities[5] = {
	"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"
};

static const char *const shipmodes[7] = {
	"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"
};

/* TPC-H's 92 colors */
static const char *const colors[] = {
	"almond", "antique", "aquamarine", "azure", "beige", "bisque", "black",
	"blanched", "blue", "blush", "brown", "burlywood", "burnished",
	"chartreuse", "chiffon", "chocolate", "coral", "cornflower", "cornsilk",
	"cream", "cyan", "dark", "deep", "dim", "dodger", "drab", "firebrick",
	"floral", "forest", "frosted", "gainsboro", "ghost", "goldenrod", "green",
	"grey", "honeydew", "hot", "indian", "ivory", "khaki", "lace", "lavender",
	"lawn", "lemon", "light", "lime", "linen", "magenta", "maroon", "medium",
	"metallic", "midnight", "mint", "misty", "moccasin", "navajo", "navy",
	"olive", "orange", "orchid", "pale", "papaya", "peach", "peru", "pink",
	"plum", "powder", "puff", "purple", "red", "rose", "rosy", "royal",
	"saddle", "salmon", "sandy", "seashell", "sienna", "sky", "slate",
	"smoke", "snow", "spring", "steel", "tan", "thistle", "tomato",
	"turquoise", "violet", "wheat", "white", "yellow"
};

#define N_COLORS NCOLS(colors)

static const char *const type_s1[6] = {
	"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"
};
static const char *const type_s2[5] = {
	"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"
};
static const char *const type_s3[5] = {
	"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"
};
static const char *const cont_s1[5] = {"SM", "LG", "MED", "JUMBO", "WRAP"};
static const char *const cont_s2[8] = {
	"CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"
};

static const char *const month_names[12] = {
	"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"
};
static const char *const day_names[7] = {
	"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
	"Saturday"
};

static const char addr_chars[65] =
"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789,.";

/* --------------------------------------------------------------- random */

static inline uint64_t
mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

#define GOLDEN UINT64_C(0x9e3779b97f4a7c15)

typedef struct Rng
{
	uint64_t	s;
} Rng;

static inline void
rng_seed(Rng *r, uint64_t key, uint64_t unit)
{
	r->s = mix64(key ^ mix64(unit * GOLDEN + 0x632be59bd9b4e019ULL));
}

static inline uint64_t
rng_next(Rng *r)
{
	r->s += GOLDEN;
	return mix64(r->s);
}

/* uniform in [0, n), n < 2^32 (multiply-shift; bias below 2^-32 * n) */
static inline uint32_t
rng_below(Rng *r, uint32_t n)
{
	return (uint32_t) (((rng_next(r) >> 32) * (uint64_t) n) >> 32);
}

/* Two small uniform draws from one 64-bit value. */
static inline void
rng_below2(Rng *r, uint32_t n1, uint32_t *v1, uint32_t n2, uint32_t *v2)
{
	uint64_t	x = rng_next(r);

	*v1 = (uint32_t) (((x >> 32) * (uint64_t) n1) >> 32);
	*v2 = (uint32_t) (((x & 0xffffffffu) * (uint64_t) n2) >> 32);
}

static void
shuffle_u8(uint8_t *a, int n, uint64_t key, uint64_t unit)
{
	Rng			r;

	rng_seed(&r, key, unit);
	for (int i = 0; i < n; i++)
		a[i] = (uint8_t) i;
	for (int i = n - 1; i > 0; i--)
	{
		int			j = (int) rng_below(&r, (uint32_t) (i + 1));
		uint8_t		t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
}

/* ---------------------------------------------------------- permutation */

void
ssb_perm_init(SsbPerm *p, uint64_t n, uint64_t key)
{
	int			bits = 2;

	while (bits < 62 && ((uint64_t) 1 << bits) < n)
		bits++;
	p->n = n;
	p->half_bits = (bits + 1) / 2;
	p->mask = ((uint64_t) 1 << p->half_bits) - 1;
	for (int i = 0; i < 4; i++)
		p->keys[i] = mix64(key + (uint64_t) (i + 1) * GOLDEN);
}

static inline uint64_t
feistel_enc(const SsbPerm *p, uint64_t x)
{
	uint64_t	l = x >> p->half_bits;
	uint64_t	r = x & p->mask;

	for (int i = 0; i < 4; i++)
	{
		uint64_t	nl = r;

		r = l ^ (mix64(r ^ p->keys[i]) & p->mask);
		l = nl;
	}
	return (l << p->half_bits) | r;
}

static inline uint64_t
feistel_dec(const SsbPerm *p, uint64_t y)
{
	uint64_t	l = y >> p->half_bits;
	uint64_t	r = y & p->mask;

	for (int i = 3; i >= 0; i--)
	{
		uint64_t	nr = l;

		l = r ^ (mix64(l ^ p->keys[i]) & p->mask);
		r = nr;
	}
	return (l << p->half_bits) | r;
}

/* cycle walking keeps the bijection on [0, n) */
uint64_t
ssb_perm_fwd(const SsbPerm *p, uint64_t x)
{
	if (p->n <= 1)
		return x;
	do
		x = feistel_enc(p, x);
	while (x >= p->n);
	return x;
}

uint64_t
ssb_perm_inv(const SsbPerm *p, uint64_t y)
{
	if (p->n <= 1)
		return y;
	do
		y = feistel_dec(p, y);
	while (y >= p->n);
	return y;
}

/* --------------------------------------------------------------- dates */

#define DAY0 8035				/* 1992-01-01 in days since 1970-01-01 */

static void
civil_from_days(int64_t z, int *y, int *m, int *d)
{
	int64_t		y64;

	pgw_civil_from_days(z, &y64, m, d);
	*y = (int) y64;
}

static bool
is_leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int
days_in_month(int y, int m)
{
	static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	return m == 2 && is_leap(y) ? 29 : dm[m - 1];
}

/* ------------------------------------------------------------- config */

int
ssb_config_init(SsbConfig *cfg, double sf, uint64_t seed, bool cluster_by_date,
				char *errbuf, size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	if (!(sf > 0) || !isfinite(sf))
	{
		snprintf(errbuf, errlen, "scale factor must be a positive number");
		return -1;
	}
	/* order keys and every other key are int32 */
	if (sf > 1400)
	{
		snprintf(errbuf, errlen, "scale factor %g is too large (at most 1400: keys are 32-bit integers)", sf);
		return -1;
	}
	cfg->sf = sf;
	cfg->seed = seed;
	cfg->cluster_by_date = cluster_by_date;
	cfg->n_orders = llround(1500000.0 * sf);
	cfg->n_customer = llround(30000.0 * sf);
	cfg->n_supplier = llround(2000.0 * sf);
	if (sf >= 1)
		cfg->n_part = 200000 * (int64_t) floor(1 + log2(sf));
	else
		cfg->n_part = llround(200000.0 * sf);
	if (cfg->n_orders < 1 || cfg->n_customer < 1 || cfg->n_supplier < 1 ||
		cfg->n_part < 1)
	{
		snprintf(errbuf, errlen, "scale factor %g is too small (at least 0.0005: one supplier)", sf);
		return -1;
	}
	for (int t = 0; t < SSB_N_TABLES; t++)
		cfg->key[t] = mix64(mix64(seed) ^ ((uint64_t) (t + 1) * UINT64_C(0xd1b54a32d192ed03)));
	ssb_perm_init(&cfg->order_perm, (uint64_t) cfg->n_orders, cfg->key[SSB_LINEORDER] ^ 1);
	ssb_perm_init(&cfg->cust_perm, (uint64_t) cfg->n_customer, cfg->key[SSB_CUSTOMER] ^ 1);
	ssb_perm_init(&cfg->supp_perm, (uint64_t) cfg->n_supplier, cfg->key[SSB_SUPPLIER] ^ 1);
	ssb_perm_init(&cfg->part_perm, (uint64_t) cfg->n_part, cfg->key[SSB_PART] ^ 1);
	for (int n = 0; n < 25; n++)
	{
		shuffle_u8(cfg->cust_digit[n], 10, cfg->key[SSB_CUSTOMER] ^ 2, (uint64_t) n);
		shuffle_u8(cfg->supp_digit[n], 10, cfg->key[SSB_SUPPLIER] ^ 2, (uint64_t) n);
	}
	shuffle_u8(cfg->brand_perm, 40, cfg->key[SSB_PART] ^ 2, 0);
	for (int i = 0; i < SSB_N_DAYS + 100; i++)
	{
		int			y,
					m,
					d;

		civil_from_days(DAY0 + i, &y, &m, &d);
		cfg->datekey[i] = y * 10000 + m * 100 + d;
	}
	return 0;
}

int64_t
ssb_table_units(const SsbConfig *cfg, SsbTable t)
{
	switch (t)
	{
		case SSB_LINEORDER:
			return cfg->n_orders;
		case SSB_CUSTOMER:
			return cfg->n_customer;
		case SSB_SUPPLIER:
			return cfg->n_supplier;
		case SSB_PART:
			return cfg->n_part;
		default:
			return SSB_N_DAYS;
	}
}

int
ssb_rows_per_unit(SsbTable t)
{
	return t == SSB_LINEORDER ? 7 : 1;
}

/* -------------------------------------------------------------- chunks */

int
ssb_chunk_init(SsbChunk *c, SsbTable t, int64_t max_units)
{
	const SsbTableInfo *ti = &ssb_tables[t];

	memset(c, 0, sizeof(*c));
	c->table = t;
	c->n_cols = ti->n_cols;
	c->cap_rows = max_units * ssb_rows_per_unit(t);
	for (int i = 0; i < ti->n_cols; i++)
	{
		if (ti->cols[i].max_len == 0)
		{
			c->ints[i] = malloc((size_t) c->cap_rows * sizeof(int32_t) + 64);
			if (c->ints[i] == NULL)
				goto oom;
		}
		else
		{
			c->strs[i].offsets = malloc((size_t) (c->cap_rows + 1) * sizeof(int32_t));
			c->strs[i].data = malloc((size_t) c->cap_rows * ti->cols[i].max_len + 64);
			if (c->strs[i].offsets == NULL || c->strs[i].data == NULL)
				goto oom;
			c->strs[i].offsets[0] = 0;
		}
	}
	return 0;
oom:
	ssb_chunk_free(c);
	return -1;
}

void
ssb_chunk_free(SsbChunk *c)
{
	for (int i = 0; i < SSB_MAX_COLS; i++)
	{
		free(c->ints[i]);
		free(c->strs[i].offsets);
		free(c->strs[i].data);
	}
	memset(c, 0, sizeof(*c));
}

/* Append a string to column col of row r (rows are filled in order). */
static inline void
put_str(SsbChunk *c, int col, int64_t r, const char *s, size_t len)
{
	SsbStrCol  *sc = &c->strs[col];
	int32_t		o = sc->offsets[r];

	memcpy(sc->data + o, s, len);
	sc->offsets[r + 1] = o + (int32_t) len;
}

static inline void
put_cstr(SsbChunk *c, int col, int64_t r, const char *s)
{
	put_str(c, col, r, s, strlen(s));
}

static inline void
put_int(SsbChunk *c, int col, int64_t r, int32_t v)
{
	c->ints[col][r] = v;
}

/* random string of [lo, hi] characters from addr_chars */
static size_t
rand_text(Rng *rng, char *buf, int lo, int hi)
{
	int			len = lo + (int) rng_below(rng, (uint32_t) (hi - lo + 1));
	uint64_t	bits = 0;
	int			avail = 0;

	for (int i = 0; i < len; i++)
	{
		if (avail < 6)
		{
			bits = rng_next(rng);
			avail = 64;
		}
		buf[i] = addr_chars[bits & 63];
		bits >>= 6;
		avail -= 6;
	}
	return (size_t) len;
}

static size_t
make_phone(Rng *rng, int nation, char *buf)
{
	return (size_t) snprintf(buf, 32, "%02d-%03u-%03u-%04u", nation + 10,
							 100 + rng_below(rng, 900), 100 + rng_below(rng, 900),
							 1000 + rng_below(rng, 9000));
}

static size_t
make_city(int nation, int digit, char *buf)
{
	const char *nm = nations[nation];
	size_t		n = strlen(nm);

	if (n > 9)
		n = 9;
	memcpy(buf, nm, n);
	memset(buf + n, ' ', 9 - n);
	buf[9] = (char) ('0' + digit);
	buf[10] = '\0';
	return 10;
}

static inline int32_t
retail_price(int64_t partkey)
{
	return (int32_t) (90000 + ((partkey / 10) % 20001) + 100 * (partkey % 1000));
}

static void
gen_lineorder(const SsbConfig *cfg, int64_t u0, int64_t u1, SsbChunk *c)
{
	int64_t		r = 0;
	const uint64_t n = (uint64_t) cfg->n_orders;
	const uint32_t ncust = (uint32_t) cfg->n_customer;
	const uint32_t npart = (uint32_t) cfg->n_part;
	const uint32_t nsupp = (uint32_t) cfg->n_supplier;
	int32_t    *orderkey = c->ints[0],
			   *linenumber = c->ints[1],
			   *custkey = c->ints[2],
			   *partkey = c->ints[3],
			   *suppkey = c->ints[4],
			   *orderdate = c->ints[5],
			   *shippriority = c->ints[7],
			   *quantity = c->ints[8],
			   *extprice = c->ints[9],
			   *ordtotal = c->ints[10],
			   *discount = c->ints[11],
			   *revenue = c->ints[12],
			   *supplycost = c->ints[13],
			   *tax = c->ints[14],
			   *commitdate = c->ints[15];
	SsbStrCol  *prio = &c->strs[6];
	SsbStrCol  *ship = &c->strs[16];
	size_t		prio_len[5],
				ship_len[7];

	for (int i = 0; i < 7; i++)
		ship_len[i] = strlen(shipmodes[i]);
	for (int i = 0; i < 5; i++)
		prio_len[i] = strlen(priorities[i]);

	for (int64_t u = u0; u < u1; u++)
	{
		uint64_t	p,
					o;
		int			day,
					nlines;
		uint32_t	cust,
					pr,
					v1;
		Rng			rng;
		int64_t		total = 0;
		int64_t		first = r;
		int32_t		datekey;

		if (cfg->cluster_by_date)
		{
			p = (uint64_t) u;
			o = ssb_perm_fwd(&cfg->order_perm, p);
		}
		else
		{
			o = (uint64_t) u;
			p = ssb_perm_inv(&cfg->order_perm, o);
		}
		day = (int) ((p * SSB_N_DAYS) / n);
		datekey = cfg->datekey[day];
		rng_seed(&rng, cfg->key[SSB_LINEORDER], o + 1);
		rng_below2(&rng, 7, &v1, 5, &pr);
		nlines = 1 + (int) v1;
		cust = 1 + rng_below(&rng, ncust);

		for (int l = 1; l <= nlines; l++, r++)
		{
			uint32_t	pk = 1 + rng_below(&rng, npart);
			uint32_t	sk = 1 + rng_below(&rng, nsupp);
			uint32_t	qty,
						disc,
						tx,
						cd,
						sm;
			int32_t		retail,
						ext;

			rng_below2(&rng, 50, &qty, 11, &disc);
			rng_below2(&rng, 9, &tx, 61, &cd);
			sm = rng_below(&rng, 7);
			qty += 1;
			retail = retail_price(pk);
			ext = (int32_t) qty * retail;

			orderkey[r] = (int32_t) (o + 1);
			linenumber[r] = l;
			custkey[r] = (int32_t) cust;
			partkey[r] = (int32_t) pk;
			suppkey[r] = (int32_t) sk;
			orderdate[r] = datekey;
			shippriority[r] = 0;
			quantity[r] = (int32_t) qty;
			extprice[r] = ext;
			discount[r] = (int32_t) disc;
			revenue[r] = (int32_t) ((int64_t) ext * (100 - disc) / 100);
			supplycost[r] = 6 * retail / 10;
			tax[r] = (int32_t) tx;
			commitdate[r] = cfg->datekey[day + 30 + cd];
			total += (int64_t) ext * (100 + tx) * (100 - disc) / 10000;

			{
				int32_t		po = prio->offsets[r];
				int32_t		so = ship->offsets[r];

				memcpy(prio->data + po, priorities[pr], prio_len[pr]);
				prio->offsets[r + 1] = po + (int32_t) prio_len[pr];
				memcpy(ship->data + so, shipmodes[sm], ship_len[sm]);
				ship->offsets[r + 1] = so + (int32_t) ship_len[sm];
			}
		}
		for (int64_t k = first; k < r; k++)
			ordtotal[k] = (int32_t) total;
	}
	c->n_rows = r;
}

/*
 * Columns 0-6 shared by customer and supplier rows: key, name, address, city,
 * nation, region, phone.  Row u's place in the table's permutation spreads
 * nations and cities evenly; rng is left seeded for the row's other columns.
 */
static void
gen_party_row(const SsbConfig *cfg, SsbTable t, const SsbPerm *perm,
			  const uint8_t (*digits)[10], const char *label, int64_t u,
			  int64_t r, SsbChunk *c, Rng *rng)
{
	char		buf[64];
	int64_t		key = u + 1;
	uint64_t	i = ssb_perm_fwd(perm, (uint64_t) u);
	int			nation = (int) (i % 25);
	int			digit = digits[nation][(i / 25) % 10];
	size_t		n;

	rng_seed(rng, cfg->key[t], (uint64_t) key);
	put_int(c, 0, r, (int32_t) key);
	n = (size_t) snprintf(buf, sizeof(buf), "%s#%09lld", label, (long long) key);
	put_str(c, 1, r, buf, n);
	n = rand_text(rng, buf, 10, 40);
	put_str(c, 2, r, buf, n);
	n = make_city(nation, digit, buf);
	put_str(c, 3, r, buf, n);
	put_cstr(c, 4, r, nations[nation]);
	put_cstr(c, 5, r, regions[nation_region[nation]]);
	n = make_phone(rng, nation, buf);
	put_str(c, 6, r, buf, n);
}

static void
gen_customer(const SsbConfig *cfg, int64_t u0, int64_t u1, SsbChunk *c)
{
	int64_t		r = 0;

	for (int64_t u = u0; u < u1; u++, r++)
	{
		Rng			rng;

		gen_party_row(cfg, SSB_CUSTOMER, &cfg->cust_perm, cfg->cust_digit, "Customer",
					  u, r, c, &rng);
		put_cstr(c, 7, r, segments[rng_below(&rng, 5)]);
	}
	c->n_rows = r;
}

static void
gen_supplier(const SsbConfig *cfg, int64_t u0, int64_t u1, SsbChunk *c)
{
	int64_t		r = 0;

	for (int64_t u = u0; u < u1; u++, r++)
	{
		Rng			rng;

		gen_party_row(cfg, SSB_SUPPLIER, &cfg->supp_perm, cfg->supp_digit, "Supplier",
					  u, r, c, &rng);
	}
	c->n_rows = r;
}

static void
gen_part(const SsbConfig *cfg, int64_t u0, int64_t u1, SsbChunk *c)
{
	char		buf[64];
	int64_t		r = 0;

	for (int64_t u = u0; u < u1; u++, r++)
	{
		int64_t		key = u + 1;
		uint64_t	i = ssb_perm_fwd(&cfg->part_perm, (uint64_t) u);
		int			mfgr = (int) (i % 5) + 1;
		int			cat = (int) ((i / 5) % 5) + 1;
		int			brand = cfg->brand_perm[(i / 25) % 40] + 1;
		uint32_t	c1,
					c2;
		Rng			rng;
		size_t		n;

		rng_seed(&rng, cfg->key[SSB_PART], (uint64_t) key);
		put_int(c, 0, r, (int32_t) key);
		c1 = rng_below(&rng, N_COLORS);
		c2 = rng_below(&rng, N_COLORS - 1);
		if (c2 >= c1)
			c2++;
		n = (size_t) snprintf(buf, sizeof(buf), "%s %s", colors[c1], colors[c2]);
		put_str(c, 1, r, buf, n);
		n = (size_t) snprintf(buf, sizeof(buf), "MFGR#%d", mfgr);
		put_str(c, 2, r, buf, n);
		n = (size_t) snprintf(buf, sizeof(buf), "MFGR#%d%d", mfgr, cat);
		put_str(c, 3, r, buf, n);
		n = (size_t) snprintf(buf, sizeof(buf), "MFGR#%d%d%02d", mfgr, cat, brand);
		put_str(c, 4, r, buf, n);
		put_cstr(c, 5, r, colors[rng_below(&rng, N_COLORS)]);
		n = (size_t) snprintf(buf, sizeof(buf), "%s %s %s",
							  type_s1[rng_below(&rng, 6)],
							  type_s2[rng_below(&rng, 5)],
							  type_s3[rng_below(&rng, 5)]);
		put_str(c, 6, r, buf, n);
		put_int(c, 7, r, 1 + (int32_t) rng_below(&rng, 50));
		n = (size_t) snprintf(buf, sizeof(buf), "%s %s",
							  cont_s1[rng_below(&rng, 5)],
							  cont_s2[rng_below(&rng, 8)]);
		put_str(c, 8, r, buf, n);
	}
	c->n_rows = r;
}

static bool
is_holiday(int m, int d)
{
	return (m == 1 && d == 1) || (m == 7 && d == 4) || (m == 11 && d == 11) ||
		(m == 12 && (d == 24 || d == 25 || d == 31));
}

static const char *
selling_season(int m)
{
	if (m == 12)
		return "Christmas";
	if (m <= 2)
		return "Winter";
	if (m <= 5)
		return "Spring";
	if (m <= 8)
		return "Summer";
	return "Fall";
}

static void
gen_date(const SsbConfig *cfg, int64_t u0, int64_t u1, SsbChunk *c)
{
	char		buf[64];
	int64_t		r = 0;

	for (int64_t u = u0; u < u1; u++, r++)
	{
		int			y,
					m,
					d,
					dow,
					doy;
		size_t		n;

		civil_from_days(DAY0 + u, &y, &m, &d);
		dow = (int) ((DAY0 + u + 4) % 7);	/* 1970-01-01 was a Thursday */
		doy = d;
		for (int k = 1; k < m; k++)
			doy += days_in_month(y, k);
		put_int(c, 0, r, cfg->datekey[u]);
		n = (size_t) snprintf(buf, sizeof(buf), "%s %d, %d", month_names[m - 1], d, y);
		put_str(c, 1, r, buf, n);
		put_cstr(c, 2, r, day_names[dow]);
		put_cstr(c, 3, r, month_names[m - 1]);
		put_int(c, 4, r, y);
		put_int(c, 5, r, y * 100 + m);
		n = (size_t) snprintf(buf, sizeof(buf), "%.3s%d", month_names[m - 1], y);
		put_str(c, 6, r, buf, n);
		put_int(c, 7, r, dow + 1);
		put_int(c, 8, r, d);
		put_int(c, 9, r, doy);
		put_int(c, 10, r, m);
		put_int(c, 11, r, (doy - 1) / 7 + 1);
		put_cstr(c, 12, r, selling_season(m));
		put_int(c, 13, r, dow == 6);
		put_int(c, 14, r, d == days_in_month(y, m));
		put_int(c, 15, r, is_holiday(m, d));
		put_int(c, 16, r, dow >= 1 && dow <= 5);
	}
	c->n_rows = r;
}

void
ssb_generate(const SsbConfig *cfg, SsbTable t, int64_t u0, int64_t u1,
			 SsbChunk *c)
{
	c->n_rows = 0;
	switch (t)
	{
		case SSB_LINEORDER:
			gen_lineorder(cfg, u0, u1, c);
			break;
		case SSB_CUSTOMER:
			gen_customer(cfg, u0, u1, c);
			break;
		case SSB_SUPPLIER:
			gen_supplier(cfg, u0, u1, c);
			break;
		case SSB_PART:
			gen_part(cfg, u0, u1, c);
			break;
		default:
			gen_date(cfg, u0, u1, c);
			break;
	}
}

/* ------------------------------------------------------------ .tbl text */

size_t
ssb_tbl_bound(const SsbChunk *c)
{
	const SsbTableInfo *ti = &ssb_tables[c->table];
	size_t		row = 1;

	for (int i = 0; i < ti->n_cols; i++)
		row += (ti->cols[i].max_len ? (size_t) ti->cols[i].max_len : 11) + 1;
	return row * (size_t) c->n_rows + 16;
}

static inline char *
put_i32(char *p, int32_t v)
{
	char		tmp[12];
	int			n = 0;
	uint32_t	u;

	if (v < 0)
	{
		*p++ = '-';
		u = (uint32_t) 0 - (uint32_t) v;
	}
	else
		u = (uint32_t) v;
	do
	{
		tmp[n++] = (char) ('0' + u % 10);
		u /= 10;
	} while (u != 0);
	while (n > 0)
		*p++ = tmp[--n];
	return p;
}

size_t
ssb_format_tbl(const SsbChunk *c, char *out)
{
	const SsbTableInfo *ti = &ssb_tables[c->table];
	char	   *p = out;

	for (int64_t r = 0; r < c->n_rows; r++)
	{
		for (int i = 0; i < ti->n_cols; i++)
		{
			if (ti->cols[i].max_len == 0)
				p = put_i32(p, c->ints[i][r]);
			else
			{
				int32_t		o0 = c->strs[i].offsets[r];
				int32_t		o1 = c->strs[i].offsets[r + 1];

				memcpy(p, c->strs[i].data + o0, (size_t) (o1 - o0));
				p += o1 - o0;
			}
			*p++ = '|';
		}
		*p++ = '\n';
	}
	return (size_t) (p - out);
}
