#include "daemon/metrics_http.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "daemon/metrics.hpp"

namespace coloc::daemon {

namespace {

std::string reply(const char* status, const char* content_type, const std::string& body, bool with_body,
                  const char* extra_header = "") {
    return std::string("HTTP/1.0 ") + status + "\r\nContent-Type: " + content_type +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra_header + "Connection: close\r\n\r\n" +
           (with_body ? body : "");
}

std::string plain(const char* status, const std::string& body, const char* extra_header = "") {
    return reply(status, "text/plain; charset=utf-8", body, true, extra_header);
}

// The end of the request head (after the blank line), or npos while incomplete.
std::size_t head_end(const std::string& in) {
    std::size_t crlf = in.find("\r\n\r\n");
    std::size_t lf = in.find("\n\n");
    if (crlf != std::string::npos && (lf == std::string::npos || crlf < lf)) return crlf + 4;
    return lf == std::string::npos ? std::string::npos : lf + 2;
}

}  // namespace

MetricsHttpServer::MetricsHttpServer(int port, const std::string& bind_address, Render render)
    : render_(std::move(render)) {
    const std::string where = bind_address + " port " + std::to_string(port);
    if (port < 0 || port > 65535) throw std::runtime_error("cannot serve metrics on " + where + ": bad port");
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* found = nullptr;
    if (int rc = getaddrinfo(bind_address.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
        throw std::runtime_error("cannot serve metrics on " + where + ": " + gai_strerror(rc));
    std::string why = "no address";
    for (addrinfo* a = found; a && listen_fd_ < 0; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            why = std::strerror(errno);
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 16) == 0) {
            listen_fd_ = fd;
        } else {
            why = std::strerror(errno);
            close(fd);
        }
    }
    freeaddrinfo(found);
    if (listen_fd_ < 0) throw std::runtime_error("cannot serve metrics on " + where + ": " + why);

    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
    port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) {
        close(listen_fd_);
        throw std::runtime_error(std::string("cannot serve metrics: epoll: ") + std::strerror(errno));
    }
    watch(listen_fd_, EPOLLIN, true);
}

MetricsHttpServer::~MetricsHttpServer() {
    for (const auto& [fd, c] : clients_) close(fd);
    close(listen_fd_);
    close(epoll_fd_);
}

void MetricsHttpServer::watch(int fd, unsigned events, bool add) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    epoll_ctl(epoll_fd_, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev);
}

void MetricsHttpServer::serve() {
    epoll_event events[32];
    int n = epoll_wait(epoll_fd_, events, 32, 0);
    for (int i = 0; i < n; ++i) {
        int fd = events[i].data.fd;
        if (fd == listen_fd_)
            accept_clients();
        else if (auto it = clients_.find(fd); it != clients_.end())
            on_client(fd, it->second);
    }
    const auto now = Clock::now();
    for (auto it = clients_.begin(); it != clients_.end();) {
        int fd = it->first;
        ++it;  // close_client erases fd's entry
        if (clients_.at(fd).deadline <= now) close_client(fd);
    }
}

void MetricsHttpServer::accept_clients() {
    for (;;) {
        int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;  // EAGAIN: none left; other errors: the client is gone
        if (clients_.size() >= kMaxClients) {
            close(fd);
            continue;
        }
        clients_[fd].deadline = Clock::now() + std::chrono::milliseconds(kClientTimeoutMs);
        watch(fd, EPOLLIN, true);
    }
}

void MetricsHttpServer::on_client(int fd, Client& c) {
    char buf[4096];
    if (c.out.empty() || c.draining) {
        for (;;) {
            ssize_t got = recv(fd, buf, sizeof buf, 0);
            if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
                return close_client(fd);
            if (got < 0) {
                if (errno == EINTR) continue;
                break;
            }
            if (c.draining) continue;
            c.in.append(buf, static_cast<std::size_t>(got));
            if (std::size_t end = head_end(c.in); end != std::string::npos && end <= kMaxRequest) {
                c.out = respond(c.in.substr(0, end));
                break;
            }
            if (c.in.size() > kMaxRequest) {
                c.out = plain("400 Bad Request", "request head over " + std::to_string(kMaxRequest) + " bytes\n");
                break;
            }
        }
        if (c.out.empty() || c.draining) return;
    }
    while (c.sent < c.out.size()) {
        ssize_t put = send(fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
        if (put < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return watch(fd, EPOLLOUT, false);
            return close_client(fd);
        }
        c.sent += static_cast<std::size_t>(put);
    }
    // Closing with unread input would reset the connection and could lose the reply.
    shutdown(fd, SHUT_WR);
    c.draining = true;
    watch(fd, EPOLLIN, false);
}

void MetricsHttpServer::close_client(int fd) {
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    close(fd);
    clients_.erase(fd);
}

std::string MetricsHttpServer::respond(const std::string& head) const {
    const std::string line = head.substr(0, head.find_first_of("\r\n"));
    const std::size_t sp1 = line.find(' ');
    const std::size_t sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string::npos || line.compare(sp2 + 1, 5, "HTTP/") != 0)
        return plain("400 Bad Request", "expected: GET /metrics HTTP/1.0\n");
    const std::string method = line.substr(0, sp1);
    std::string path = line.substr(sp1 + 1, sp2 - sp1 - 1);
    path = path.substr(0, path.find('?'));
    if (path != "/metrics") return plain("404 Not Found", "not found: only /metrics is served here\n");
    if (method != "GET" && method != "HEAD")
        return plain("405 Method Not Allowed", "only GET and HEAD\n", "Allow: GET, HEAD\r\n");
    try {
        return reply("200 OK", kMetricsContentType, render_(), method == "GET");
    } catch (const std::exception& e) {
        return plain("500 Internal Server Error", std::string("metrics: ") + e.what() + "\n");
    }
}

}  // namespace coloc::daemon
