// How long the arrivals the sharing rule expects are counted over (place::QueueDemand's window):
// colocd.yaml's admission.arrival_window_s and the replay's default alike.
#pragma once

namespace coloc::place {

// A day: every window holds a whole daily cycle of a site's submissions, so the rate is not
// the night's or the morning's, and a lasting change of load is followed within two days.
inline constexpr int kArrivalWindowS = 24 * 3600;

}  // namespace coloc::place
