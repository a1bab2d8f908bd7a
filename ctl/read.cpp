// colocctl's read commands: status, nodes, jobs, history, explain.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <iostream>

#include "ctl/commands.hpp"
#include "ctl/output.hpp"
#include "proto/jobs.hpp"

namespace coloc::ctl {

namespace {

// One row per job and node: what Slurm users see as a job's placement.
json flatten_jobs(const json& jobs) {
    json rows = json::array();
    for (const auto& j : jobs) {
        const proto::JobRecord job = proto::JobRecord::from_json(j);
        json base = job.to_json();
        base.erase("placements");
        base.erase("colocations");
        base.erase("profile_unknown");
        base["profile"] = job.profile_shown();
        if (job.placements.empty()) rows.push_back(base);
        for (const proto::PlacementRecord& p : job.placements) {
            json row = base;
            const json placement = p.to_json();
            for (const char* k : {"decision", "node", "mode", "gpus", "predicted_slowdown", "source"})
                row[k] = placement[k];
            rows.push_back(row);
        }
    }
    return rows;
}

const std::vector<Field> kJobFields = {
    {"job_id", "JOBID", true},
    {"user", "USER"},
    {"uid", "UID", true},
    {"job_name", "NAME"},
    {"partition", "PARTITION"},
    {"profile", "PROFILE"},
    {"state", "STATE"},
    {"node", "NODE"},
    {"mode", "MODE"},
    {"gpus", "GPUS"},
    {"decision", "DECISION", true},
    {"predicted_slowdown", "PRED_SLOWDOWN", true},
    {"measured_slowdown", "MEAS_SLOWDOWN", true},
    {"source", "SOURCE"},
    {"submit", "SUBMIT"},
    {"start", "START"},
    {"end", "END"},
    {"exit_status", "EXIT", true},
    {"elapsed_s", "ELAPSED_S", true},
};
constexpr const char* kJobDefault =
    "job_id,user,job_name,partition,profile,state,node,mode,gpus,predicted_slowdown,measured_slowdown,start,end";

const std::vector<Field> kNodeFields = {
    {"node", "NODE"},
    {"type", "TYPE"},
    {"link", "LINK"},
    {"gpus", "GPUS", true},
    {"slots_per_gpu", "SLOTS/GPU", true},
    {"free_slots", "FREE_SLOTS", true},
    {"jobs", "JOBS", true},
    {"gpu_jobs", "JOBS_PER_GPU"},
};
constexpr const char* kNodeDefault = "node,type,link,gpus,slots_per_gpu,free_slots,jobs,gpu_jobs";

const std::vector<Field> kColocationFields = {
    {"job_id", "JOBID", true}, {"other", "OTHER", true}, {"node", "NODE"},
    {"sharing", "SHARING"},    {"start", "START"},       {"end", "END"},
};

const std::vector<Field> kCandidateFields = {
    {"rank", "RANK", true}, {"where", "WHERE"},     {"job_slowdown", "JOB_SLOWDOWN", true},
    {"harm", "HARM", true}, {"loss", "LOSS", true}, {"neighbours", "NEIGHBOURS"},
};

}  // namespace

void add_status_command(CLI::App& app, const CtlOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand("status", "show colocd's state and counters");
    cmd->callback([&opts, &exit_code] {
        json reply;
        if (!call_daemon(opts, "status", "status", op_request(proto::Op::Status), reply, exit_code)) return;
        const json& s = reply["status"];
        if (opts.json) return print_json("status", "status", s, json::array());
        // Identity first, then the cluster, then the counters; keys this colocctl does not know last.
        static const std::vector<std::string> order = {"version",
                                                       "config",
                                                       "database",
                                                       "schema_version",
                                                       "listen",
                                                       "model",
                                                       "profiles",
                                                       "started",
                                                       "uptime_s",
                                                       "nodes",
                                                       "gpus",
                                                       "gpu_hardware",
                                                       "warnings",
                                                       "slots",
                                                       "slots_used",
                                                       "running_jobs",
                                                       "jobs_in_history",
                                                       "requests",
                                                       "refused",
                                                       "auth_refused",
                                                       "placements",
                                                       "reused",
                                                       "adopted",
                                                       "moved",
                                                       "ended",
                                                       "observations",
                                                       "elapsed_jobs_used",
                                                       "elapsed_left_out_failed",
                                                       "elapsed_left_out_too_short",
                                                       "elapsed_left_out_no_solo",
                                                       "elapsed_left_out_alone",
                                                       "elapsed_left_out_several_gpus",
                                                       "elapsed_refits",
                                                       "database_state",
                                                       "database_backlog",
                                                       "database_backlog_max",
                                                       "database_backlog_oldest_s",
                                                       "database_last_error",
                                                       "database_last_retry",
                                                       "database_write_failures",
                                                       "database_written_late"};
        std::vector<std::string> keys = order;
        for (const auto& [k, v] : s.items())
            if (std::find(order.begin(), order.end(), k) == order.end()) keys.push_back(k);
        for (const auto& k : keys) {
            if (!s.contains(k)) continue;
            // Lines of their own (a node type's GPUs, a warning) each get a line.
            const bool lines = k == "gpu_hardware" || k == "warnings";
            for (const json& v : lines&& s[k].is_array() ? s[k] : json::array({s[k]})) {
                std::string value = cell(k, v);
                if (opts.parsable)
                    std::cout << k << "|" << value << "\n";
                else
                    std::cout << k << std::string(k.size() < 18 ? 18 - k.size() : 1, ' ') << "= " << value << "\n";
            }
        }
    });
}

void add_nodes_command(CLI::App& app, const CtlOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand("nodes", "show nodes, their GPUs and who uses them");
    cmd->callback([&opts, &exit_code] {
        json reply;
        if (!call_daemon(opts, "nodes", "nodes", op_request(proto::Op::Nodes), reply, exit_code)) return;
        json rows = reply["nodes"];
        if (!opts.json)
            for (auto& r : rows) {
                std::string per_gpu;
                for (const auto& g : r["gpu_jobs"])
                    per_gpu += (per_gpu.empty() ? "" : " ") + std::to_string(g["jobs"].size());
                r["gpu_jobs"] = per_gpu;
            }
        exit_code = print_records(opts, "nodes", rows, kNodeFields, kNodeDefault);
    });
}

void add_jobs_command(CLI::App& app, const CtlOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand("jobs", "show jobs colocd placed (yours, or all for admins)");
    static bool running_only = false;
    static int limit = 1000;
    cmd->add_flag("-r,--running", running_only, "only jobs that have not ended");
    cmd->add_option("-n,--limit", limit, "at most this many jobs, newest first")->check(CLI::Range(1, 100000));
    cmd->callback([&opts, &exit_code] {
        json reply;
        json req = op_request(proto::Op::Jobs);
        req["limit"] = limit;
        req["all"] = !running_only;
        if (!call_daemon(opts, "jobs", "jobs", req, reply, exit_code)) return;
        if (opts.json) return print_json("jobs", "jobs", reply["jobs"], json::array());
        exit_code = print_records(opts, "jobs", flatten_jobs(reply["jobs"]), kJobFields, kJobDefault);
    });
}

void add_history_command(CLI::App& app, const CtlOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand("history", "show the recorded history of a job, or export it all");
    static std::int64_t job_id = 0;
    static std::string export_path;
    static bool do_export = false;
    static int limit = 1000000;
    cmd->add_option("-j,--job", job_id, "one job: its placements and who it shared what with");
    auto* ex =
        cmd->add_option("--export", export_path, "write coloc-history JSON lines (for replay) to FILE, - = stdout");
    ex->expected(0, 1);
    cmd->add_option("-n,--limit", limit, "at most this many jobs, newest first");
    cmd->callback([&opts, &exit_code, ex] {
        do_export = ex->count() > 0;
        json req = op_request(proto::Op::History);
        req["limit"] = limit;
        if (job_id > 0) req["job_id"] = job_id;
        if (do_export) req["colocations"] = true;  // colocctl fit --history learns from them
        json reply;
        if (!call_daemon(opts, "history", "history", req, reply, exit_code)) return;
        const json& hist = reply["history"];
        if (do_export) {
            std::ofstream file;
            std::ostream* out = &std::cout;
            if (!export_path.empty() && export_path != "-") {
                file.open(export_path);
                if (!file) {
                    std::cerr << "colocctl: error: cannot write " << export_path << "\n";
                    exit_code = 1;
                    return;
                }
                out = &file;
            }
            *out << json({{"format", "coloc-history"}, {"version", 1}}).dump() << "\n";
            for (auto it = hist.rbegin(); it != hist.rend(); ++it) {
                const proto::JobRecord job = proto::JobRecord::from_json(*it);
                json j = job.to_json();
                json placements = json::array();
                for (const proto::PlacementRecord& p : job.placements)
                    placements.push_back({{"node", p.node}, {"gpus", p.gpus}});
                j["placements"] = placements;
                *out << j.dump() << "\n";
            }
            return;
        }
        if (opts.json) return print_json("history", "history", hist, json::array());
        exit_code = print_records(opts, "history", flatten_jobs(hist), kJobFields, kJobDefault);
        if (job_id > 0 && !hist.empty() && hist[0].contains("colocations")) {
            std::cout << "\n";
            exit_code = print_records(CtlOptions{opts.endpoint, opts.munge_socket, opts.timeout_ms, false,
                                                 opts.parsable, opts.noheader, "", opts.cluster},
                                      "colocations", hist[0]["colocations"], kColocationFields,
                                      "job_id,other,node,sharing,start,end");
        }
    });
}

void add_explain_command(CLI::App& app, const CtlOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand("explain", "show what colocd chose for a job, the alternatives and why");
    static std::int64_t job_id = 0;
    cmd->add_option("JOBID", job_id, "the Slurm job id")->required();
    cmd->callback([&opts, &exit_code] {
        json reply;
        json req = op_request(proto::Op::Explain);
        req["job_id"] = job_id;
        if (!call_daemon(opts, "explain", "explain", req, reply, exit_code)) return;
        if (opts.json) return print_json("explain", "explain", reply["explain"], json::array());
        if (const json& e = reply.value("elastic_slots", json()); e.is_object())
            std::cout << "job " << job_id << " while pending, elastic slots: "
                      << (e.value("opens", false) ? "a shared slot opened" : "no shared slot opened") << ": "
                      << e.value("why", std::string()) << "\n";
        if (const json& a = reply.value("admission", json()); a.is_object())
            std::cout << "job " << job_id << " while pending, admission: " << a.value("why", std::string()) << "\n";
        for (const auto& d : reply["explain"]) {
            std::cout << "job " << job_id;
            if (d.contains("profile")) std::cout << " (profile " << d["profile"].get<std::string>() << ")";
            std::cout << " on " << d["node"].get<std::string>() << ": GPUs " << cell("gpus", d["gpus"]) << " ("
                      << d["mode"].get<std::string>() << " mode, decision " << d["decision"] << ", "
                      << d["source"].get<std::string>() << ", model " << d["model"].get<std::string>()
                      << "), predicted slowdown " << cell("x", d["predicted_slowdown"]);
            if (const json& m = d.value("measured_slowdown", json()); m.is_number())
                std::cout << ", measured " << cell("x", m);
            std::cout << "\n";
            if (const json& st = d.value("steering", json()); st.is_object())
                std::cout << "  steering: extra weight " << st.value("extra_weight", 0) << " (least "
                          << st.value("least_extra_weight", 0) << "), "
                          << (st.value("followed", false) ? "followed" : "not followed") << ", features "
                          << cell("features", st.value("features", json::array())) << "\n";
            if (const std::string why = d.value("sharing", std::string()); !why.empty())
                std::cout << "  sharing: " << why << "\n";
            json rows = json::array();
            int rank = 1;
            for (const auto& c : d["candidates"]) {
                std::string where;
                for (const auto& w : c["where"])
                    where += (where.empty() ? "" : " ") + w["node"].get<std::string>() + ":" + cell("gpus", w["gpus"]);
                std::string neigh;
                for (const auto& n : c["neighbours"])
                    neigh += (neigh.empty() ? "" : " ") + std::to_string(n["job_id"].get<std::int64_t>()) +
                             (n.contains("shares") ? "/" + n["shares"].get<std::string>() : "") + ":" +
                             cell("x", n["before"]) + "->" + cell("x", n["after"]);
                rows.push_back({{"rank", rank++},
                                {"where", where},
                                {"job_slowdown", c["job_slowdown"]},
                                {"harm", c["harm"]},
                                {"loss", c["loss"]},
                                {"neighbours", neigh}});
            }
            if (rows.empty()) {
                std::cout << "  (no alternatives recorded: the plugin placed it while colocd was away)\n";
                continue;
            }
            exit_code =
                print_records(CtlOptions{opts.endpoint, opts.munge_socket, opts.timeout_ms, false, opts.parsable,
                                         opts.noheader, "", opts.cluster},
                              "candidates", rows, kCandidateFields, "rank,where,job_slowdown,harm,loss,neighbours");
        }
    });
}

}  // namespace coloc::ctl

namespace coloc::ctl {

void add_metrics_command(CLI::App& app, const CtlOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand("metrics", "print colocd's metrics in Prometheus text format");
    cmd->callback([&opts, &exit_code] {
        json reply;
        if (!call_daemon(opts, "metrics", "metrics", op_request(proto::Op::Metrics), reply, exit_code)) return;
        if (opts.json) return print_json("metrics", "metrics", reply["metrics"], json::array());
        std::cout << reply["metrics"].get<std::string>();
    });
}

}  // namespace coloc::ctl
