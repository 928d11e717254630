/* mise.cu compiled for the CPU emulator (cuda_emu.h). */
#include "../mise.cu"
