// The Prometheus renderer and the /metrics HTTP endpoint.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "daemon/metrics.hpp"
#include "daemon/metrics_http.hpp"

using namespace coloc::daemon;

namespace {

bool has_line(const std::string& text, const std::string& line) {
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
        if (l == line) return true;
    return false;
}

// GET `path` from a client thread while this thread runs the main loop's part (poll fd(), serve())
// until the reply is in; the whole reply, status line first.
std::string scrape(MetricsHttpServer& server, const std::string& path) {
    auto reply = std::async(std::launch::async, [port = server.port(), path] {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        timeval limit{10, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(port));
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        std::string got;
        if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
            const std::string request = "GET " + path + " HTTP/1.0\r\nHost: a\r\n\r\n";
            send(fd, request.data(), request.size(), MSG_NOSIGNAL);
            char buf[4096];
            for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) got.append(buf, static_cast<std::size_t>(n));
        }
        close(fd);
        return got;
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (reply.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready &&
           std::chrono::steady_clock::now() < deadline) {
        pollfd ready{server.fd(), POLLIN, 0};
        poll(&ready, 1, 10);
        server.serve();
    }
    return reply.get();
}

// "200 OK" from "HTTP/1.1 200 OK": the server answers in the request's HTTP version.
std::string status_of(const std::string& reply) {
    const std::string line = reply.substr(0, reply.find("\r\n"));
    return line.substr(std::min(line.find(' ') + 1, line.size()));
}
std::string body_of(const std::string& reply) {
    auto at = reply.find("\r\n\r\n");
    return at == std::string::npos ? "" : reply.substr(at + 4);
}

MetricsSnapshot with_requests(std::int64_t n) {
    MetricsSnapshot s;
    s.requests = n;
    return s;
}

}  // namespace

TEST_CASE("histogram buckets are cumulative and end with +Inf") {
    Histogram h({0.1, 1});
    for (double v : {0.05, 0.1, 0.5, 2.0, std::nan("")}) h.observe(v);
    CHECK(h.count() == 4);  // NaN ignored
    CHECK(h.sum() == doctest::Approx(2.65));
    CHECK(h.cumulative() == std::vector<std::uint64_t>{2, 3, 4});  // le=0.1 includes 0.1 itself
    CHECK_THROWS_AS(Histogram({1, 1}), std::invalid_argument);
    CHECK_THROWS_AS(Histogram({1, INFINITY}), std::invalid_argument);
}

TEST_CASE("render_metrics writes every family in the text format") {
    MetricsSnapshot s;
    s.version = "0.1";
    s.start_time_s = 1700000000;
    s.requests = 12;
    s.placements = 5;
    s.reused = 2;
    s.adopted = 1;
    s.ended = 3;
    s.observations = 6;
    s.auth_refused = 4;
    s.refused_by_code = {{"no_capacity", 2}, {"forbidden", 1}};
    s.running_jobs = 2;
    s.slots_used = 3;
    s.slots_total = 16;
    s.database_backlog = 0;
    s.database_journal_bytes = 4096;
    s.request_seconds_by_op.emplace("place", latency_histogram());
    s.request_seconds_by_op.at("place").observe(0.0004);
    s.request_seconds_by_op.at("place").observe(0.003);
    s.predicted_slowdown.observe(1.08);
    s.observed_slowdown.observe(5.0);
    const std::string text = render_metrics(s);

    CHECK(has_line(text, "# TYPE coloc_placements_total counter"));
    CHECK(has_line(text, "coloc_build_info{version=\"0.1\"} 1"));
    CHECK(has_line(text, "coloc_start_time_seconds 1700000000"));
    CHECK(has_line(text, "coloc_requests_total 12"));
    CHECK(has_line(text, "coloc_placements_total 5"));
    CHECK(has_line(text, "coloc_placements_reused_total 2"));
    CHECK(has_line(text, "coloc_placements_adopted_total 1"));
    CHECK(has_line(text, "coloc_jobs_ended_total 3"));
    CHECK(has_line(text, "coloc_observations_total 6"));
    CHECK(has_line(text, "coloc_auth_refused_total 4"));
    CHECK(has_line(text, "coloc_requests_refused_total{code=\"no_capacity\"} 2"));
    CHECK(has_line(text, "coloc_requests_refused_total{code=\"forbidden\"} 1"));
    CHECK(has_line(text, "# TYPE coloc_running_jobs gauge"));
    CHECK(has_line(text, "coloc_running_jobs 2"));
    CHECK(has_line(text, "coloc_gpu_slots_used 3"));
    CHECK(has_line(text, "coloc_gpu_slots 16"));
    CHECK(has_line(text, "coloc_database_backlog 0"));
    CHECK(has_line(text, "coloc_database_journal_bytes 4096"));
    CHECK(has_line(text, "coloc_database_journal_failed 0"));
    CHECK(has_line(text, "# TYPE coloc_request_duration_seconds histogram"));
    CHECK(has_line(text, "coloc_request_duration_seconds_bucket{op=\"place\",le=\"0.0005\"} 1"));
    CHECK(has_line(text, "coloc_request_duration_seconds_bucket{op=\"place\",le=\"0.0025\"} 1"));
    CHECK(has_line(text, "coloc_request_duration_seconds_bucket{op=\"place\",le=\"0.005\"} 2"));
    CHECK(has_line(text, "coloc_request_duration_seconds_bucket{op=\"place\",le=\"+Inf\"} 2"));
    CHECK(has_line(text, "coloc_request_duration_seconds_count{op=\"place\"} 2"));
    const std::string sum_key = "coloc_request_duration_seconds_sum{op=\"place\"} ";
    const auto sum_at = text.find(sum_key);
    REQUIRE(sum_at != std::string::npos);
    CHECK(std::stod(text.substr(sum_at + sum_key.size())) == doctest::Approx(0.0034));
    CHECK(has_line(text, "coloc_predicted_slowdown_ratio_bucket{le=\"1.05\"} 0"));
    CHECK(has_line(text, "coloc_predicted_slowdown_ratio_bucket{le=\"1.1\"} 1"));
    CHECK(has_line(text, "coloc_observed_slowdown_ratio_bucket{le=\"4\"} 0"));
    CHECK(has_line(text, "coloc_observed_slowdown_ratio_bucket{le=\"+Inf\"} 1"));
    CHECK(has_line(text, "coloc_observed_slowdown_ratio_sum 5"));

    // Every line is a comment or `name{labels} value`; each family's TYPE comes once, before its samples.
    std::set<std::string> typed;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
        if (l.rfind("# TYPE ", 0) == 0) {
            std::string name = l.substr(7, l.find(' ', 7) - 7);
            CHECK_MESSAGE(typed.insert(name).second, "TYPE twice: " << name);
            continue;
        }
        if (l.rfind("# HELP ", 0) == 0) continue;
        const std::size_t name_end = l.find_first_not_of("abcdefghijklmnopqrstuvwxyz_");
        REQUIRE_MESSAGE(name_end != std::string::npos, "not a sample: " << l);
        const std::string name = l.substr(0, name_end);
        std::string rest = l.substr(name_end);
        if (rest[0] == '{') rest = rest.substr(rest.find("} ") + 1);
        CHECK_MESSAGE((rest.size() > 1 && rest[0] == ' ' && rest.find(' ', 1) == std::string::npos),
                      "not a sample: " << l);
        std::string family = name;
        for (const char* suffix : {"_bucket", "_sum", "_count"})
            if (!typed.count(name) && family.ends_with(suffix)) family.resize(family.size() - std::strlen(suffix));
        CHECK_MESSAGE(typed.count(family), "sample before its TYPE: " << l);
    }
    CHECK(text.back() == '\n');
}

TEST_CASE("label values are escaped") {
    MetricsSnapshot s;
    s.refused_by_code = {{"a\"b\\c\nd", 1}};
    CHECK(has_line(render_metrics(s), "coloc_requests_refused_total{code=\"a\\\"b\\\\c\\nd\"} 1"));
}

TEST_CASE("the HTTP endpoint serves /metrics from the serving thread, and nothing else") {
    int renders = 0;
    const auto serving = std::this_thread::get_id();
    bool elsewhere = false;
    MetricsHttpServer server(0, "127.0.0.1", [&] {
        ++renders;
        elsewhere = elsewhere || std::this_thread::get_id() != serving;
        return with_requests(7);
    });
    REQUIRE(server.port() > 0);

    SUBCASE("GET /metrics") {
        const std::string r = scrape(server, "/metrics?x=1");
        CHECK(status_of(r) == "200 OK");
        CHECK(r.find("Content-Type: text/plain") != std::string::npos);
        CHECK(has_line(body_of(r), "coloc_requests_total 7"));
        CHECK(has_line(body_of(r), "# TYPE coloc_request_duration_seconds histogram"));
        CHECK(renders == 1);
        CHECK_FALSE(elsewhere);
    }
    SUBCASE("other paths are 404") {
        CHECK(status_of(scrape(server, "/")) == "404 Not Found");
        CHECK(status_of(scrape(server, "/metricsx")) == "404 Not Found");
        CHECK(renders == 0);
    }
}

TEST_CASE("the HTTP endpoint serves the last snapshot when taking one fails") {
    bool fail = false;
    MetricsHttpServer server(0, "127.0.0.1", [&] {
        if (fail) throw std::runtime_error("boom");
        return with_requests(3);
    });
    CHECK(has_line(body_of(scrape(server, "/metrics")), "coloc_requests_total 3"));
    fail = true;
    const std::string r = scrape(server, "/metrics");
    CHECK(status_of(r) == "200 OK");
    CHECK(has_line(body_of(r), "coloc_requests_total 3"));
}

TEST_CASE("the HTTP endpoint takes a host name") {
    MetricsHttpServer server(0, "localhost", [] { return with_requests(1); });
    CHECK(has_line(body_of(scrape(server, "/metrics")), "coloc_requests_total 1"));
}

TEST_CASE("the HTTP endpoint names the address it cannot use") {
    MetricsHttpServer first(0, "127.0.0.1", [] { return MetricsSnapshot(); });
    try {
        MetricsHttpServer second(first.port(), "127.0.0.1", [] { return MetricsSnapshot(); });
        FAIL("a second server bound the same port");
    } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()).find("127.0.0.1 port " + std::to_string(first.port())) != std::string::npos);
    }
    CHECK_THROWS_AS(MetricsHttpServer(80000, "127.0.0.1", [] { return MetricsSnapshot(); }), std::runtime_error);
}
