/* gfi subcommands: each takes the argument vector after "gfi". */
#ifndef GFI_COMMANDS_H
#define GFI_COMMANDS_H
int cmd_sample(int argc, char **argv);
int cmd_pdf(int argc, char **argv);
int cmd_density(int argc, char **argv);
int cmd_regress(int argc, char **argv);
int cmd_regress_sample(int argc, char **argv);
int cmd_regress_rates(int argc, char **argv);
int cmd_regress_mse(int argc, char **argv);
int cmd_concentration(int argc, char **argv);
int cmd_attention(int argc, char **argv);
int cmd_flt_error(int argc, char **argv);
int cmd_flt_complexity(int argc, char **argv);
int cmd_mise(int argc, char **argv);
int cmd_ropt(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_rates(int argc, char **argv);
int cmd_correlation(int argc, char **argv);
int cmd_reproduce(int argc, char **argv);
#endif
