// Who may do what: the plugin's reports come from root (slurmstepd) or SlurmUser; admins read
// everything; every other user reads only their own jobs.
#pragma once

#include <sys/types.h>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace coloc::daemon {

// Who may send an op (Service's route table): every authenticated user, the plugin's reporters
// (root, SlurmUser) or colocd's admins (root, SlurmUser, `admins`).
enum class Role { User, Reporter, Admin };

const char* to_string(Role role);

class Access {
public:
    // `admins`: user names or numeric uids; unknown names are an error (a typo would otherwise
    // silently lock an admin out).
    Access(const std::vector<std::string>& admins, const std::string& slurm_user);

    bool is_admin(uid_t uid) const;
    bool may_report(uid_t uid) const;  // place / started / ended
    bool has(Role role, uid_t uid) const;
    // Per-job visibility (data, not a role): admins see every job, users their own.
    bool may_see(std::int64_t job_uid, uid_t uid) const;
    // Throws ProtoError(forbidden) when `uid` lacks `role`: "only <who> may <action>; uid N may not".
    void require(Role role, uid_t uid, const std::string& action) const;

private:
    std::vector<uid_t> admins_;
    uid_t slurm_uid_ = 0;
};

// A uid as a user name; the number when the name is unknown.
std::string user_name(long uid);

// user_name() remembered for a while: the place path names every job's user, and a lookup can
// read /etc/passwd or ask a directory service. A renamed user shows up within kKeepS.
class UserNames {
public:
    static constexpr std::int64_t kKeepS = 300;
    const std::string& of(long uid, std::int64_t now);

private:
    struct Known {
        std::string name;
        std::int64_t looked_up = 0;
    };
    std::unordered_map<long, Known> known_;
};
// A user name or numeric string as a uid; -1 when unknown.
long uid_of(const std::string& name_or_uid);

}  // namespace coloc::daemon
