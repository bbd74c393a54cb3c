/*
 * ssb_cli.h — shared by the two halves of `pgwarp ssb`: cmd_ssb.c (options,
 * `gen`) and ssb_load.c (`load`).
 */
#ifndef PGWARP_SSB_CLI_H
#define PGWARP_SSB_CLI_H

#include "ssb_gen.h"

extern const char *const ssb_usage;
/* generation and load order: small tables first */
extern const SsbTable ssb_table_order[SSB_N_TABLES];

int			cmd_ssb_load(int argc, char **argv);

#endif							/* PGWARP_SSB_CLI_H */
