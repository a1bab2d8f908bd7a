// The Prometheus renderer and the /metrics HTTP endpoint.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmath>
#include <cstring>
#include <set>
#include <sstream>
#include <stdexcept>

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

// A client of the server under test, driven from the same thread: it sends, then serve() runs
// until the server has closed its side.
std::string exchange(MetricsHttpServer& server, const std::vector<std::string>& chunks) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(server.port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    pollfd ready{server.fd(), POLLIN, 0};
    REQUIRE(poll(&ready, 1, 2000) == 1);  // the connection alone makes fd() readable
    for (const auto& c : chunks) {
        server.serve();
        REQUIRE(send(fd, c.data(), c.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(c.size()));
    }
    shutdown(fd, SHUT_WR);
    std::string got;
    char buf[4096];
    for (int i = 0; i < 400; ++i) {
        pollfd p{server.fd(), POLLIN, 0};
        poll(&p, 1, 5);
        server.serve();
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0) break;
        if (n > 0) got.append(buf, static_cast<std::size_t>(n));
    }
    close(fd);
    return got;
}

std::string status_line(const std::string& reply) { return reply.substr(0, reply.find("\r\n")); }
std::string body_of(const std::string& reply) {
    auto at = reply.find("\r\n\r\n");
    return at == std::string::npos ? "" : reply.substr(at + 4);
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

TEST_CASE("the HTTP endpoint serves /metrics and nothing else") {
    int renders = 0;
    MetricsHttpServer server(0, "127.0.0.1", [&] {
        ++renders;
        return std::string("coloc_requests_total 7\n");
    });
    REQUIRE(server.port() > 0);

    SUBCASE("GET /metrics, in pieces") {
        std::string r = exchange(server, {"GET /metr", "ics?x=1 HTTP/1.1\r\nHost: a\r\n", "\r\n"});
        CHECK(status_line(r) == "HTTP/1.0 200 OK");
        CHECK(r.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n") != std::string::npos);
        CHECK(r.find("Content-Length: 23\r\n") != std::string::npos);
        CHECK(body_of(r) == "coloc_requests_total 7\n");
        CHECK(renders == 1);
    }
    SUBCASE("HEAD has the headers only") {
        std::string r = exchange(server, {"HEAD /metrics HTTP/1.0\r\n\r\n"});
        CHECK(status_line(r) == "HTTP/1.0 200 OK");
        CHECK(r.find("Content-Length: 23\r\n") != std::string::npos);
        CHECK(body_of(r).empty());
    }
    SUBCASE("other paths are 404, other methods 405, garbage 400") {
        CHECK(status_line(exchange(server, {"GET / HTTP/1.0\r\n\r\n"})) == "HTTP/1.0 404 Not Found");
        CHECK(status_line(exchange(server, {"GET /metricsx HTTP/1.0\r\n\r\n"})) == "HTTP/1.0 404 Not Found");
        std::string r = exchange(server, {"POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n"});
        CHECK(status_line(r) == "HTTP/1.0 405 Method Not Allowed");
        CHECK(r.find("Allow: GET, HEAD\r\n") != std::string::npos);
        CHECK(status_line(exchange(server, {"hello\n\n"})) == "HTTP/1.0 400 Bad Request");
        CHECK(renders == 0);
    }
    SUBCASE("a request head over the bound is refused, not buffered") {
        std::string big = "GET /metrics HTTP/1.0\r\nX: " + std::string(MetricsHttpServer::kMaxRequest, 'a');
        std::string r = exchange(server, {big});
        CHECK(status_line(r) == "HTTP/1.0 400 Bad Request");
        CHECK(renders == 0);
    }
    SUBCASE("a failing renderer gives 500") {
        MetricsHttpServer failing(0, "127.0.0.1", []() -> std::string { throw std::runtime_error("boom"); });
        std::string r = exchange(failing, {"GET /metrics HTTP/1.0\r\n\r\n"});
        CHECK(status_line(r) == "HTTP/1.0 500 Internal Server Error");
        CHECK(body_of(r) == "metrics: boom\n");
    }
}

TEST_CASE("the HTTP endpoint names the address it cannot use") {
    MetricsHttpServer first(0, "127.0.0.1", [] { return std::string(); });
    try {
        MetricsHttpServer second(first.port(), "127.0.0.1", [] { return std::string(); });
        FAIL("a second server bound the same port");
    } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()).find("127.0.0.1 port " + std::to_string(first.port())) != std::string::npos);
    }
    CHECK_THROWS_AS(MetricsHttpServer(80000, "127.0.0.1", [] { return std::string(); }), std::runtime_error);
}
