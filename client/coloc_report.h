/* coloc_report: a training job tells colocd how long its iterations take.
 *
 * Inside a job placed by spank_coloc.so, call coloc_report_init() once, coloc_report_iteration()
 * after each training iteration and coloc_report_close() at the end. The library sends the mean
 * iteration time and the iteration count at most once per interval (COLOC_REPORT_INTERVAL_S,
 * default 30 s), authenticated with munge as the job's user. Sending happens on a thread of its
 * own: coloc_report_iteration() only adds to a sum and never waits on colocd or munged. A failed
 * send is dropped; the first failure is logged as one line on stderr, starting "coloc: ".
 *
 * Environment (Slurm and spank_coloc.so set the first three in the job's tasks):
 *   SLURM_JOB_ID              the job to report for (required)
 *   COLOC_DECISION            set when coloc placed the job (required: else nothing is sent)
 *   COLOC_ENDPOINT            colocd's endpoint, default ipc:///run/coloc/colocd.sock
 *   SLURMD_NODENAME           the node, sent along (informational)
 *   COLOC_REPORT              "0" turns reporting off
 *   COLOC_REPORT_INTERVAL_S   seconds between reports, default 30 (0 = every iteration)
 *   COLOC_REPORT_TIMEOUT_MS   how long the sending thread waits for colocd, default 500
 *   COLOC_MUNGE_SOCKET        munged's socket, default munge's own
 *
 * Phase alignment (coloc_report_align) is separate from reporting and needs only:
 *   COLOC_PHASE_ALIGN         "1": the job opts in
 *   COLOC_PHASE_OFFSET_S      the job's slot within its period on the wall clock (set by
 *                             spank_coloc.so from colocd's reply; default 0)
 *   COLOC_PHASE_PERIOD_S      the period colocd assumed (set with the offset); else the call's
 *   COLOC_PHASE_MAX_SLEEP     longest wait at one iteration boundary, share of a period (0.1)
 *
 * See coloc_report(3). */
#ifndef COLOC_REPORT_H
#define COLOC_REPORT_H

#ifdef __cplusplus
extern "C" {
#endif

/* Reads the environment and starts reporting. Returns 1 when reports will be sent, 0 when
 * reporting is off (not in a coloc job, COLOC_REPORT=0, a bad setting: logged once). Calling it
 * again restarts with the current environment. */
int coloc_report_init(void);

/* One training iteration took `seconds`. Cheap (a lock and a sum); values that are not finite
 * or not above 0 are ignored; does nothing when reporting is off. */
void coloc_report_iteration(double seconds);

/* Sends what is summed now, without waiting for the interval (still on the sending thread). */
void coloc_report_flush(void);

/* Sends what is left, waits for that send (at most COLOC_REPORT_TIMEOUT_MS) and stops. */
void coloc_report_close(void);

/* Call at the start of each iteration. When the job opted in (COLOC_PHASE_ALIGN=1), iterations
 * start on a grid of the wall clock: slots at COLOC_PHASE_OFFSET_S + k * period (seconds since the
 * epoch; the period stretched by 2 %), so that jobs whose communication bursts share a link stay
 * interleaved. The first call sleeps until the first slot; later calls sleep until the
 * iteration's slot when it is near, at most COLOC_PHASE_MAX_SLEEP of a period, and never when
 * late. `period_s`: the job's iteration period alone, used when COLOC_PHASE_PERIOD_S is unset.
 * Returns the seconds slept (0 when not opted in). */
double coloc_report_align(double period_s);

#ifdef __cplusplus
}
#endif

#endif /* COLOC_REPORT_H */
