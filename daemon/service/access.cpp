#include "daemon/service/access.hpp"

#include <pwd.h>
#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "proto/errors.hpp"

namespace coloc::daemon {

std::string user_name(long uid) {
    if (uid < 0) return "";
    struct passwd pw {};
    struct passwd* found = nullptr;
    char buf[1024];
    if (getpwuid_r(static_cast<uid_t>(uid), &pw, buf, sizeof buf, &found) == 0 && found) return pw.pw_name;
    return std::to_string(uid);
}

const std::string& UserNames::of(long uid, std::int64_t now) {
    Known& k = known_[uid];
    if (k.looked_up == 0 || now - k.looked_up >= kKeepS || now < k.looked_up) {
        k.name = user_name(uid);
        k.looked_up = now;
    }
    return k.name;
}

long uid_of(const std::string& name_or_uid) {
    long n = -1;
    auto [p, ec] = std::from_chars(name_or_uid.data(), name_or_uid.data() + name_or_uid.size(), n);
    if (ec == std::errc() && p == name_or_uid.data() + name_or_uid.size()) return n;
    struct passwd pw {};
    struct passwd* found = nullptr;
    char buf[1024];
    if (getpwnam_r(name_or_uid.c_str(), &pw, buf, sizeof buf, &found) == 0 && found) return pw.pw_uid;
    return -1;
}

Access::Access(const std::vector<std::string>& admins, const std::string& slurm_user) {
    admins_.push_back(0);
    for (const auto& a : admins) {
        long uid = uid_of(a);
        if (uid < 0) throw std::invalid_argument("admins: unknown user '" + a + "'");
        admins_.push_back(static_cast<uid_t>(uid));
    }
    long su = uid_of(slurm_user);
    if (su < 0) throw std::invalid_argument("slurm_user: unknown user '" + slurm_user + "'");
    slurm_uid_ = static_cast<uid_t>(su);
}

bool Access::is_admin(uid_t uid) const {
    return uid == slurm_uid_ || std::find(admins_.begin(), admins_.end(), uid) != admins_.end();
}

bool Access::may_see(std::int64_t job_uid, uid_t uid) const {
    return is_admin(uid) || job_uid == static_cast<std::int64_t>(uid);
}

bool Access::may_report(uid_t uid) const { return uid == 0 || uid == slurm_uid_; }

const char* to_string(Role role) {
    switch (role) {
        case Role::User:
            return "user";
        case Role::Reporter:
            return "reporter";
        case Role::Admin:
            return "admin";
    }
    return "?";
}

bool Access::has(Role role, uid_t uid) const {
    switch (role) {
        case Role::User:
            return true;
        case Role::Reporter:
            return may_report(uid);
        case Role::Admin:
            return is_admin(uid);
    }
    return false;
}

void Access::require(Role role, uid_t uid, const std::string& action) const {
    if (has(role, uid)) return;
    const char* who = role == Role::Reporter ? "slurmstepd (root or SlurmUser)" : "colocd's admins";
    throw proto::ProtoError(proto::code::kForbidden, std::string("only ") + who + " may " + action + "; uid " +
                                                         std::to_string(uid) + " may not");
}

}  // namespace coloc::daemon
