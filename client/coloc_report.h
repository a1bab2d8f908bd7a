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

#ifdef __cplusplus
}
#endif

#endif /* COLOC_REPORT_H */
