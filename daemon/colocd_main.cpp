// colocd: the placement daemon. main() is a ladder: each step initialises one thing, and the
// steps are undone in reverse order on the way out.
#include <unistd.h>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>

#include "config/config.hpp"
#include "config/site_check.hpp"
#include "daemon/layout_watch.hpp"
#include "daemon/log.hpp"
#include "daemon/metrics.hpp"
#include "daemon/metrics_http.hpp"
#include "daemon/server.hpp"
#include "daemon/service/service.hpp"
#include "proto/curve.hpp"
#include "slurm/release.hpp"

namespace {

std::atomic<bool> g_stop{false};
// Leave the serving loop: to stop, or to serve a layout Slurm changed.
std::atomic<bool> g_leave{false};

void on_signal(int) {
    g_stop.store(true);
    g_leave.store(true);
}

int serve(const coloc::daemon::Config& config, const std::atomic<bool>& leave);

// How often colocd asks again while slurmctld does not answer its first layout question.
constexpr int kLayoutRetryS = 5;

void install_signals() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);
}

// Removes the pidfile when colocd exits the normal way.
class PidFile {
public:
    explicit PidFile(std::string path) : path_(std::move(path)) {
        if (path_.empty()) return;
        std::ofstream out(path_);
        if (!out) throw std::runtime_error("cannot write pidfile " + path_);
        out << getpid() << "\n";
    }
    ~PidFile() {
        if (!path_.empty()) std::remove(path_.c_str());
    }

private:
    std::string path_;
};

}  // namespace

int main(int argc, char** argv) {
    using namespace coloc::daemon;
    std::string config_path = "/etc/coloc/colocd.yaml";
    bool foreground = false;
    bool verbose = false;
    std::string pidfile_override;
    bool check = false;

    CLI::App app{"colocd: interference-aware GPU placement daemon for Slurm"};
    app.add_option("-c,--config", config_path, "configuration file")->capture_default_str();
    app.add_flag("-f,--foreground", foreground, "stay in the foreground, log to stderr");
    app.add_flag("-v,--verbose", verbose, "log every request");
    app.add_option("--pidfile", pidfile_override, "write the pid here (overrides the config)");
    app.add_flag("--check", check,
                 "compare slurm.conf, gres.conf, plugstack.conf and the config; exit 1 naming each disagreement");
    const auto slurm_built = coloc::slurm::built_for();
    const auto slurm_running = coloc::slurm::running();
    app.set_version_flag("-V,--version", coloc::slurm::version_banner("colocd", "0.1", slurm_built, slurm_running));
    CLI11_PARSE(app, argc, argv);
    if (verbose) set_log_level(LogLevel::Debug);

    if (check) return print_check_report(check_site(config_path, slurm_conf_path()), "colocd --check");

    // 1. configuration
    Config config;
    try {
        config = load_config(config_path);
    } catch (const std::exception& e) {
        log_error(e.what());
        return 1;
    }
    if (!pidfile_override.empty()) config.pidfile = pidfile_override;

    // 2. detach (after the config is known good, so errors reach the terminal)
    if (!foreground) {
        if (daemon(0, 0) != 0) {
            log_error("cannot detach from the terminal");
            return 1;
        }
        log_to_syslog();
    }
    install_signals();
    if (const auto drift = coloc::slurm::drift_line(slurm_built, slurm_running); !drift.empty()) log_error(drift);

    // 3. the nodes, from Slurm when colocd.yaml does not name them all; slurmctld may start later
    const Config yaml = config;
    if (config.slurm_layout && !wait_for_slurm_layout(config, g_stop, kLayoutRetryS)) return 0;

    // Serves until stopped; when Slurm's layout changes, again with the new one.
    for (;;) {
        g_leave.store(g_stop.load());
        std::unique_ptr<LayoutWatch> watch;
        if (config.slurm_layout)
            watch = std::make_unique<LayoutWatch>(yaml, config.topology, config.slurm_layout_interval_s, g_leave);
        if (const int rc = serve(config, g_leave); rc != 0 || g_stop.load()) return rc;
        watch.reset();
        log_info("Slurm's layout changed: serving it");
        if (!wait_for_slurm_layout(config = yaml, g_stop, kLayoutRetryS)) return 0;
    }
}

namespace {

// colocd's CURVE secret key, made at first start; empty, with a warning once, when colocd.yaml
// names no server_key_file. Throws naming the file when it cannot be used.
std::string server_secret_key(const coloc::daemon::Config& config) {
    using namespace coloc;
    static bool warned = false;
    if (config.server_key_file.empty()) {
        if (!std::exchange(warned, true))
            daemon::log_error(
                "server_key_file is not set: clients cannot tell colocd's replies from another "
                "server's, and send their munge credentials to whatever answers (colocd.yaml(5))");
        return "";
    }
    const std::string pub = proto::public_key_file_for(config.server_key_file);
    const proto::CurveKeys keys = proto::load_or_create_server_keys(config.server_key_file, pub);
    if (!std::exchange(warned, true))
        daemon::log_info("replies are authenticated with CURVE; the nodes need the public key " + pub);
    return keys.secret_key;
}

int serve(const coloc::daemon::Config& config, const std::atomic<bool>& leave) {
    using namespace coloc::daemon;
    try {
        // 4. history store and state (recovers jobs that were running)
        Service service(config);
        // 5. endpoints (and the metrics endpoint, when configured)
        Server server(config.listen, server_secret_key(config), config.listen_plain);
        std::unique_ptr<MetricsHttpServer> metrics;
        if (config.metrics_port > 0)
            metrics = std::make_unique<MetricsHttpServer>(config.metrics_port, config.metrics_address,
                                                          [&service] { return service.metrics(); });
        // 6. pidfile, once we can serve
        PidFile pid(config.pidfile);
        log_info("serving " + std::to_string(config.topology.nodes().size()) + " nodes on " + config.listen.front() +
                 " (" + std::to_string(service.cluster().job_count()) + " running jobs recovered)");
        // 7. serve until told to stop; between requests the loop looks for work due (a Slurm
        // answer to pick up) at least every 50 ms, a fifth of admission's default watch.
        server.run(service, leave, 50, metrics.get());
        log_info("stopping");
        service.store_before_stop();
    } catch (const std::exception& e) {
        log_error(e.what());
        return 1;
    }
    return 0;
}

}  // namespace
