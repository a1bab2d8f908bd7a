#include <istream>
#include <nlohmann/json.hpp>

#include "replay/reader_context.hpp"
#include "replay/readers.hpp"
#include "replay/text.hpp"

namespace coloc::replay {

namespace {

using nlohmann::json;

// Field checks that name the field in the error.
struct Bad {
    std::string why;
};

const json& field(const json& o, const char* name) {
    auto it = o.find(name);
    if (it == o.end()) throw Bad{std::string("no \"") + name + "\""};
    return *it;
}

double number(const json& v, const char* name) {
    if (!v.is_number()) throw Bad{std::string("\"") + name + "\" must be a number"};
    return v.get<double>();
}

std::string text(const json& o, const char* name) {
    auto it = o.find(name);
    if (it == o.end() || it->is_null()) return "";
    if (!it->is_string()) throw Bad{std::string("\"") + name + "\" must be a string"};
    return it->get<std::string>();
}

}  // namespace

void read_coloc_history(std::istream& in, Trace& trace, const ReadOptions& options) {
    ReaderContext ctx(trace, options);
    std::string line;
    std::size_t lineno = 0;
    bool header = false;
    while (next_line(in, line)) {
        ++lineno;
        if (trim(line).empty()) continue;
        json o = json::parse(line, nullptr, false);
        if (!header) {
            if (o.is_discarded() || !o.is_object() || !o.contains("format") || o.at("format") != "coloc-history")
                ctx.fatal(lineno, "the first line must be {\"format\":\"coloc-history\",\"version\":1}");
            auto v = o.find("version");
            if (v == o.end() || !v->is_number_integer()) ctx.fatal(lineno, "the header has no integer \"version\"");
            if (v->get<long long>() != 1)
                ctx.fatal(lineno, "coloc-history version " + v->dump() + " is not supported (this colocctl reads 1)");
            header = true;
            continue;
        }
        ctx.record();
        if (o.is_discarded()) {
            ctx.bad(lineno, "not a JSON object");
            continue;
        }
        try {
            if (!o.is_object()) throw Bad{"not a JSON object"};
            TraceJob job;
            job.line = lineno;
            const json& id = field(o, "job_id");
            if (!id.is_number_unsigned() && !(id.is_number_integer() && id.get<long long>() >= 0))
                throw Bad{"\"job_id\" must be a non-negative integer"};
            job.id = id.get<std::uint64_t>();
            job.user = text(o, "user");
            job.name = text(o, "job_name");
            job.partition = text(o, "partition");
            job.profile = text(o, "profile");
            job.state = text(o, "state");
            job.submit = number(field(o, "submit"), "submit");
            const json& start = field(o, "start");
            const json& end = field(o, "end");
            if (start.is_null()) {
                ctx.skip("never started");
                continue;
            }
            job.recorded_start = number(start, "start");
            if (end.is_null()) {
                ctx.skip("still running");
                continue;
            }
            double end_s = number(end, "end");
            auto elapsed = o.find("elapsed_s");
            job.run_time = (elapsed != o.end() && !elapsed->is_null()) ? number(*elapsed, "elapsed_s")
                                                                       : end_s - job.recorded_start;
            // What it would have taken alone, where its iteration reports tell: the replay slows
            // it by the neighbours its own placement gives it, not by those it had here.
            if (auto work = o.find("work_s"); work != o.end() && !work->is_null())
                job.run_time = number(*work, "work_s");
            if (auto limit = o.find("time_limit_s"); limit != o.end() && !limit->is_null())
                job.time_limit = number(*limit, "time_limit_s");
            const json& placements = field(o, "placements");
            if (!placements.is_array()) throw Bad{"\"placements\" must be a list"};
            for (const json& p : placements) {
                if (!p.is_object()) throw Bad{"each placement must be an object {\"node\":..,\"gpus\":[..]}"};
                RecordedPlacement rp;
                const json& node = field(p, "node");
                if (!node.is_string()) throw Bad{"a placement's \"node\" must be a string"};
                rp.node = node.get<std::string>();
                const json& gpus = field(p, "gpus");
                if (!gpus.is_array()) throw Bad{"a placement's \"gpus\" must be a list of GPU indices"};
                for (const json& g : gpus) {
                    if (!g.is_number_integer() || g.get<long long>() < 0 || g.get<long long>() > 1024)
                        throw Bad{"a placement's \"gpus\" must be GPU indices"};
                    rp.gpus.push_back(g.get<int>());
                }
                job.gpus += static_cast<int>(rp.gpus.size());
                job.placements.push_back(std::move(rp));
            }
            job.nodes = static_cast<int>(job.placements.size());
            if (job.run_time <= 0) {
                ctx.skip("ran for 0 s");
                continue;
            }
            ctx.keep(std::move(job));
        } catch (const Bad& b) {
            ctx.bad(lineno, b.why);
        } catch (const json::exception& e) {
            ctx.bad(lineno, e.what());
        }
    }
    if (!header) ctx.fatal(lineno, "empty: the first line must be {\"format\":\"coloc-history\",\"version\":1}");
}

}  // namespace coloc::replay
