// coloc-link: the shared link of the emulated training jobs, a relay on 127.0.0.1 that takes
// bursts at a fixed rate shared fairly among the bursts in progress.
//
// A job connects, reads the link's rate (8 bytes, bytes per second), then for each burst sends an
// 8-byte length N and N bytes and waits for a 1-byte acknowledgement. The relay drains the bytes
// as they come and acknowledges a burst when a link of the given rate, split equally among the
// bursts in progress (the model's fair share, model/phase.hpp), would have carried its N bytes.
// The shared-rate accounting is exact between events; only wake-up latency adds to it.
//
// Usage: coloc-link --rate BYTES_PER_S [--port-file PATH]   (prints "port N" on stdout)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

double now_s() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

struct Conn {
    int fd = -1;
    unsigned char header[8]{};
    int header_got = 0;
    std::uint64_t need = 0;  // bytes of the burst in progress (0: none)
    std::uint64_t got = 0;   // bytes drained
    double carried = 0;      // bytes the shared link has carried so far
    bool active() const { return need > 0; }
};

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "coloc-link: %s: %s\n", what.c_str(), std::strerror(errno));
    std::exit(1);
}

// The fluid link from `from` to `to`: active bursts share `rate` equally; a burst that completes
// leaves the others a larger share for the rest of the interval.
void carry(std::vector<Conn>& conns, double rate, double dt) {
    while (dt > 0) {
        int k = 0;
        double least = INFINITY;
        for (auto& c : conns)
            if (c.active() && c.carried < double(c.need)) {
                ++k;
                least = std::min(least, double(c.need) - c.carried);
            }
        if (k == 0) return;
        const double each = rate / k;
        const double step = std::min(dt, least / each);
        for (auto& c : conns)
            if (c.active() && c.carried < double(c.need)) c.carried += each * step;
        dt -= step;
        if (dt > 0)  // the least burst is done: settle rounding before sharing the rest
            for (auto& c : conns)
                if (c.active() && double(c.need) - c.carried < 1e-6) c.carried = double(c.need);
    }
}

// Seconds until the next burst the link completes, INFINITY when none is in progress.
double next_completion(const std::vector<Conn>& conns, double rate) {
    int k = 0;
    double least = INFINITY;
    for (auto& c : conns)
        if (c.active() && c.carried < double(c.need)) {
            ++k;
            least = std::min(least, double(c.need) - c.carried);
        }
    return k ? least / (rate / k) : INFINITY;
}

}  // namespace

int main(int argc, char** argv) {
    double rate = 0;
    std::string port_file;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--rate" && i + 1 < argc)
            rate = std::atof(argv[++i]);
        else if (a == "--port-file" && i + 1 < argc)
            port_file = argv[++i];
        else {
            std::fprintf(stderr, "coloc-link: unknown argument %s (usage: --rate BYTES_PER_S [--port-file PATH])\n",
                         a.c_str());
            return 2;
        }
    }
    if (!(rate > 0)) {
        std::fprintf(stderr, "coloc-link: --rate must be a positive number of bytes per second\n");
        return 2;
    }
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (lfd < 0) die("socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0 || listen(lfd, 64) < 0) die("bind");
    socklen_t len = sizeof addr;
    getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len);
    const int port = ntohs(addr.sin_port);
    if (!port_file.empty()) {
        const std::string tmp = port_file + ".tmp";
        FILE* f = std::fopen(tmp.c_str(), "w");
        if (!f) die("open " + tmp);
        std::fprintf(f, "%d\n", port);
        std::fclose(f);
        if (rename(tmp.c_str(), port_file.c_str()) < 0) die("rename " + port_file);
    }
    std::printf("port %d\n", port);
    std::fflush(stdout);

    std::vector<Conn> conns;
    std::vector<char> sink(1 << 20);
    double last = now_s();
    for (;;) {
        std::vector<pollfd> fds{{lfd, POLLIN, 0}};
        for (auto& c : conns) fds.push_back({c.fd, POLLIN, 0});
        const double wait = next_completion(conns, rate);
        timespec ts{};
        timespec* tp = nullptr;
        if (std::isfinite(wait)) {
            const double w = std::max(0.0, wait);
            ts.tv_sec = time_t(w);
            ts.tv_nsec = long((w - double(ts.tv_sec)) * 1e9);
            tp = &ts;
        }
        if (ppoll(fds.data(), fds.size(), tp, nullptr) < 0 && errno != EINTR) die("ppoll");
        const double t = now_s();
        carry(conns, rate, t - last);
        last = t;
        if (fds[0].revents & POLLIN) {
            int fd = accept(lfd, nullptr, nullptr);
            if (fd >= 0) {
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                const std::uint64_t r = std::uint64_t(rate);
                if (write(fd, &r, sizeof r) == sizeof r)
                    conns.push_back(Conn{.fd = fd});
                else
                    close(fd);
            }
        }
        for (std::size_t i = 1; i < fds.size(); ++i) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            Conn& c = conns[i - 1];
            bool gone = false;
            for (;;) {  // a header, then the burst's bytes, without reading past the burst
                ssize_t n;
                if (c.header_got < 8) {
                    n = recv(c.fd, c.header + c.header_got, 8 - c.header_got, MSG_DONTWAIT);
                    if (n > 0 && (c.header_got += int(n)) == 8) {
                        std::memcpy(&c.need, c.header, 8);
                        c.got = 0;
                        c.carried = 0;
                        if (c.need == 0) c.header_got = 0;
                    }
                } else {
                    const std::uint64_t left = c.need - c.got;
                    n = recv(c.fd, sink.data(), std::min<std::uint64_t>(left, sink.size()), MSG_DONTWAIT);
                    if (n > 0) c.got += std::uint64_t(n);
                }
                if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) gone = true;
                if (n <= 0 || (c.header_got == 8 && c.got == c.need)) break;
            }
            if (gone) {
                close(c.fd);
                c.fd = -1;
            }
        }
        for (auto& c : conns) {  // acknowledge bursts the link has carried and that arrived whole
            if (c.fd < 0 || !c.active() || c.got < c.need || double(c.need) - c.carried > 1e-6) continue;
            const char ack = 1;
            if (send(c.fd, &ack, 1, MSG_NOSIGNAL) != 1) {
                close(c.fd);
                c.fd = -1;
            }
            c.need = 0;
            c.header_got = 0;
        }
        std::erase_if(conns, [](const Conn& c) { return c.fd < 0; });
    }
}
