// Each trace reader on good and bad lines, --skip-bad counting, and format detection.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <tuple>

#include "replay/readers.hpp"
#include "replay/text.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc::replay;

namespace {

Trace read(const std::string& text, TraceFormat format, bool skip_bad = false) {
    std::istringstream in(text);
    ReadOptions o;
    o.skip_bad = skip_bad;
    return read_trace(in, format, "t.log", o);
}

// The message of the TraceError that reading `text` throws ("" when none).
std::string error_of(const std::string& text, std::optional<TraceFormat> format) {
    std::istringstream in(text);
    try {
        read_trace(in, format, "t.log");
    } catch (const TraceError& e) {
        return e.what();
    }
    return "";
}

const char* kSacctHeader =
    "JobIDRaw|JobName|User|Partition|Submit|Start|End|ElapsedRaw|TimelimitRaw|NNodes|AllocTRES|ReqTRES|State|"
    "NodeList\n";

}  // namespace

TEST_CASE("text helpers parse strictly") {
    CHECK(parse_int("42") == 42);
    CHECK_FALSE(parse_int("4x").has_value());
    CHECK_FALSE(parse_int("").has_value());
    CHECK(parse_number(" 2.5 ") == 2.5);
    CHECK(parse_slurm_duration("1-02:03:04") == 86400 + 2 * 3600 + 3 * 60 + 4);
    CHECK(parse_slurm_duration("30") == 1800);
    CHECK(parse_slurm_duration("02:30") == 150);
    CHECK(parse_slurm_duration("1-2") == 86400 + 7200);
    CHECK_FALSE(parse_slurm_duration("1:2:3:4").has_value());
    CHECK(tres_gpus("billing=4,cpu=4,gres/gpu=2,mem=16G,node=1") == 2);
    CHECK(tres_gpus("cpu=4,gres/gpu:a100=2,gres/gpu:v100=1") == 3);
    CHECK(tres_gpus("cpu=4,gres/gpu=4,gres/gpu:a100=4") == 4);
    CHECK(tres_gpus("cpu=4,mem=1G") == 0);
    CHECK_FALSE(tres_gpus("gres/gpu=two").has_value());
    // Counts from a log never overflow an int: beyond kMaxCount they are not counts.
    CHECK(parse_count("8") == 8);
    CHECK(parse_count("2.7") == 2);
    CHECK_FALSE(parse_count("-1").has_value());
    CHECK_FALSE(parse_count("8.5e119").has_value());
    CHECK_FALSE(tres_gpus("gres/gpu:a=999999,gres/gpu:b=999999").has_value());
    CHECK_FALSE(tres_gpus("gres/gpu=99999999999").has_value());
    auto a = parse_datetime("2023-04-01T10:00:00"), b = parse_datetime("2023-04-01 10:00:30");
    REQUIRE(a);
    REQUIRE(b);
    CHECK(*b - *a == 30);
    CHECK_FALSE(parse_datetime("2023-13-01T10:00:00").has_value());
    auto csv = split_csv(R"(1,"a,b","say ""hi""")");
    REQUIRE(csv);
    CHECK(csv->size() == 3);
    CHECK((*csv)[1] == "a,b");
    CHECK((*csv)[2] == "say \"hi\"");
    CHECK_FALSE(split_csv("1,\"open").has_value());
}

TEST_CASE("sacct -P: jobs, steps, never-started and running jobs, GPUs from TRES") {
    std::string text = std::string(kSacctHeader) +
                       "101|train|alice|gpu|2023-04-01T10:00:00|2023-04-01T10:05:00|2023-04-01T11:05:00|3600|120|1|"
                       "billing=8,cpu=8,gres/gpu=2,mem=32G,node=1|cpu=8,gres/gpu=2|COMPLETED|n1\n"
                       "101.batch|batch||gpu|2023-04-01T10:00:00|2023-04-01T10:05:00|2023-04-01T11:05:00|3600||1|"
                       "cpu=8|cpu=8|COMPLETED|n1\n"
                       "102|eval|bob|gpu|2023-04-01T10:01:00|Unknown|Unknown|0|60|1||cpu=1,gres/gpu=1|PENDING|None "
                       "assigned\n"
                       "103|long|bob|gpu|2023-04-01T10:02:00|2023-04-01T10:02:00|Unknown|100|UNLIMITED|2|"
                       "cpu=2,gres/gpu=8|cpu=2,gres/gpu=8|RUNNING|n[1-2]\n"
                       "104|cpu|carol|cpu|2023-04-01T10:03:00|2023-04-01T10:03:00|2023-04-01T10:04:00|60|Partition_"
                       "Limit|1|cpu=1,mem=1G|cpu=1|CANCELLED by 0|n3\n";
    Trace t = read(text, TraceFormat::Sacct);
    REQUIRE(t.jobs.size() == 2);
    const TraceJob& j = t.jobs[0];
    CHECK(j.id == 101);
    CHECK(j.name == "train");
    CHECK(j.user == "alice");
    CHECK(j.gpus == 2);
    CHECK(j.nodes == 1);
    CHECK(j.run_time == 3600);
    CHECK(j.time_limit == 7200);
    CHECK(j.recorded_start - j.submit == 300);
    CHECK(j.node_list == "n1");
    CHECK(t.jobs[1].id == 104);
    CHECK(t.jobs[1].gpus == 0);
    CHECK(t.jobs[1].state == "CANCELLED");
    CHECK(t.jobs[1].time_limit == 0);
    CHECK(t.skipped.at("job step (use sacct -X)") == 1);
    CHECK(t.skipped.at("never started") == 1);
    CHECK(t.skipped.at("still running") == 1);
    CHECK(t.records == 5);
}

TEST_CASE("sacct -P: bad lines name their line; --skip-bad counts them") {
    std::string text = std::string(kSacctHeader) +
                       "201|a|u|p|2023-04-01T10:00:00|2023-04-01T10:00:00|2023-04-01T10:10:00|600|10|1|gres/"
                       "gpu=1||COMPLETED|n1\n"
                       "202|a|u|p|yesterday|2023-04-01T10:00:00|2023-04-01T10:10:00|600|10|1|gres/gpu=1||COMPLETED|"
                       "n1\n"
                       "203|a|u|p|2023-04-01T10:00:00\n"
                       "204|a|u|p|2023-04-01T10:00:00|2023-04-01T10:00:00|2023-04-01T10:10:00|600|10|1|gres/"
                       "gpu=x||COMPLETED|n1\n";
    CHECK(error_of(text, TraceFormat::Sacct).find("t.log:3: Submit 'yesterday' is not a time") == 0);
    Trace t = read(text, TraceFormat::Sacct, true);
    CHECK(t.jobs.size() == 1);
    CHECK(t.bad == 3);
    REQUIRE(t.bad_lines.size() == 3);
    CHECK(t.bad_lines[0].line == 3);
    CHECK(t.bad_lines[1].line == 4);
    CHECK(t.bad_lines[1].why.find("fields where the header has 14") != std::string::npos);
    CHECK(t.bad_lines[2].line == 5);
    CHECK(error_of("JobName|User\nx|y\n", TraceFormat::Sacct).find("t.log:1:") == 0);
    CHECK(error_of(std::string("JobID|Submit|Elapsed\n"), TraceFormat::Sacct).find("AllocTRES nor ReqTRES") !=
          std::string::npos);
}

TEST_CASE("sacct -p (trailing bar) and Elapsed/Timelimit in Slurm's duration format") {
    std::string text =
        "JobID|Submit|Start|End|Elapsed|Timelimit|NNodes|ReqTRES|\n"
        "7_1|2023-04-01T10:00:00|2023-04-01T10:00:10|2023-04-01T12:00:10|02:00:00|1-00:00:00|1|gres/gpu=4|\n";
    Trace t = read(text, TraceFormat::Sacct);
    REQUIRE(t.jobs.size() == 1);
    CHECK(t.jobs[0].id == 7);
    CHECK(t.jobs[0].run_time == 7200);
    CHECK(t.jobs[0].time_limit == 86400);
    CHECK(t.jobs[0].gpus == 4);
}

TEST_CASE("jobcomp/filetxt: Slurm 22.05 records, names with blanks, bad records") {
    std::string good =
        "JobId=11 UserId=alice(1001) GroupId=users(100) Name=train resnet JobState=COMPLETED Partition=gpu "
        "TimeLimit=60 StartTime=2023-04-01T10:00:05 EndTime=2023-04-01T10:30:05 NodeList=n[1-2] NodeCnt=2 "
        "ProcCnt=8 WorkDir=/home/alice/my runs ReservationName= Tres=cpu=8,mem=16G,node=2,billing=8,gres/gpu=8 "
        "Account=ml QOS=normal WcKey= Cluster=c SubmitTime=2023-04-01T10:00:00 EligibleTime=2023-04-01T10:00:00 "
        "DerivedExitCode=0:0 ExitCode=0:0 \n";
    std::string unlimited =
        "JobId=12 UserId=bob(1002) GroupId=users(100) Name=x JobState=TIMEOUT Partition=gpu TimeLimit=UNLIMITED "
        "StartTime=2023-04-01T11:00:00 EndTime=2023-04-01T11:00:30 NodeList=n3 NodeCnt=1 ProcCnt=1 WorkDir=/ "
        "ReservationName= Tres=cpu=1,gres/gpu=1 Account= QOS=normal WcKey= Cluster=c SubmitTime=unknown "
        "EligibleTime=unknown ArrayJobId=12 ArrayTaskId=3 DerivedExitCode=0:0 ExitCode=0:1 \n";
    std::string never =
        "JobId=13 UserId=bob(1002) GroupId=users(100) Name=y JobState=CANCELLED Partition=gpu TimeLimit=5 "
        "StartTime=Unknown EndTime=2023-04-01T11:00:30 NodeList=(null) NodeCnt=0 ProcCnt=0 WorkDir=/ "
        "ReservationName= Tres=cpu=1 Account= QOS=normal WcKey= Cluster=c SubmitTime=2023-04-01T11:00:00 "
        "EligibleTime=2023-04-01T11:00:00 DerivedExitCode=0:0 ExitCode=0:0 \n";
    std::string broken = "JobId=14 UserId=x(1) JobState=COMPLETED StartTime=2023-04-01T11:00:00\n";
    std::string bad_time =
        "JobId=15 UserId=x(1) GroupId=g(1) Name=z JobState=COMPLETED Partition=p TimeLimit=ten "
        "StartTime=2023-04-01T11:00:00 EndTime=2023-04-01T11:10:00 NodeList=n1 NodeCnt=1 ProcCnt=1 WorkDir=/ "
        "ReservationName= Tres=gres/gpu=1 Account= QOS= WcKey= Cluster=c SubmitTime=2023-04-01T11:00:00 "
        "EligibleTime=2023-04-01T11:00:00 DerivedExitCode=0:0 ExitCode=0:0\n";
    Trace t = read(good + unlimited + never, TraceFormat::Jobcomp);
    REQUIRE(t.jobs.size() == 2);
    CHECK(t.jobs[0].id == 11);
    CHECK(t.jobs[0].name == "train resnet");
    CHECK(t.jobs[0].user == "alice");
    CHECK(t.jobs[0].gpus == 8);
    CHECK(t.jobs[0].nodes == 2);
    CHECK(t.jobs[0].cpus == 8);
    CHECK(t.jobs[0].run_time == 1800);
    CHECK(t.jobs[0].time_limit == 3600);
    CHECK(t.jobs[0].recorded_start - t.jobs[0].submit == 5);
    CHECK(t.jobs[0].node_list == "n[1-2]");
    CHECK(t.jobs[1].time_limit == 0);
    CHECK(t.jobs[1].state == "TIMEOUT");
    CHECK(t.notes.at("no SubmitTime: StartTime used") == 1);
    CHECK(t.skipped.at("never started") == 1);

    CHECK(error_of(good + broken, TraceFormat::Jobcomp).find("t.log:2: no EndTime=") == 0);
    CHECK(error_of(good + bad_time, TraceFormat::Jobcomp).find("t.log:2: TimeLimit 'ten'") == 0);
    Trace s = read(good + broken + bad_time, TraceFormat::Jobcomp, true);
    CHECK(s.jobs.size() == 1);
    CHECK(s.bad == 2);
}

TEST_CASE("coloc-history: header, jobs with placements, nulls, bad objects") {
    std::string text =
        "{\"format\":\"coloc-history\",\"version\":1}\n"
        "{\"job_id\":5,\"uid\":1001,\"user\":\"alice\",\"job_name\":\"bert\",\"partition\":\"gpu\",\"profile\":"
        "\"bert-large\",\"submit\":1000,\"start\":1010,\"end\":1610,\"elapsed_s\":600,\"exit_status\":0,\"state\":"
        "\"COMPLETED\",\"placements\":[{\"node\":\"n1\",\"gpus\":[0,1]},{\"node\":\"n2\",\"gpus\":[0,1]}]}\n"
        "{\"job_id\":6,\"uid\":1001,\"user\":\"alice\",\"job_name\":\"x\",\"partition\":\"gpu\",\"profile\":\"\","
        "\"submit\":1000,\"start\":1010,\"end\":null,\"elapsed_s\":null,\"exit_status\":0,\"state\":\"RUNNING\","
        "\"placements\":[{\"node\":\"n1\",\"gpus\":[2]}]}\n"
        "{\"job_id\":7,\"submit\":\"soon\",\"start\":1,\"end\":2,\"placements\":[]}\n"
        "not json\n"
        "{\"job_id\":8,\"submit\":1,\"start\":2,\"end\":3,\"placements\":[{\"node\":\"n1\",\"gpus\":[\"a\"]}]}\n";
    Trace t = read(text, TraceFormat::ColocHistory, true);
    REQUIRE(t.jobs.size() == 1);
    const TraceJob& j = t.jobs[0];
    CHECK(j.id == 5);
    CHECK(j.profile == "bert-large");
    CHECK(j.gpus == 4);
    CHECK(j.nodes == 2);
    CHECK(j.run_time == 600);
    CHECK(j.placements[1].node == "n2");
    CHECK(t.skipped.at("still running") == 1);
    CHECK(t.bad == 3);
    CHECK(t.bad_lines[0].line == 4);
    CHECK(t.bad_lines[0].why == "\"submit\" must be a number");
    CHECK(t.bad_lines[1].line == 5);
    CHECK(t.bad_lines[2].line == 6);
    CHECK(error_of("{\"format\":\"coloc-history\",\"version\":2}\n", TraceFormat::ColocHistory).find("version 2") !=
          std::string::npos);
    CHECK(error_of("{\"job_id\":1}\n", TraceFormat::ColocHistory).find("t.log:1: the first line must be") == 0);
}

TEST_CASE("coloc-history: what a job would have taken alone (work_s) is its run time, and its time limit is read") {
    std::string text =
        "{\"format\":\"coloc-history\",\"version\":1}\n"
        "{\"job_id\":5,\"submit\":1000,\"start\":1010,\"end\":1610,\"elapsed_s\":600,\"work_s\":400,"
        "\"time_limit_s\":900,\"placements\":[{\"node\":\"n1\",\"gpus\":[0]}]}\n"
        "{\"job_id\":6,\"submit\":1000,\"start\":1010,\"end\":1610,\"elapsed_s\":600,\"work_s\":null,"
        "\"placements\":[{\"node\":\"n1\",\"gpus\":[1]}]}\n";
    Trace t = read(text, TraceFormat::ColocHistory, false);
    REQUIRE(t.jobs.size() == 2);
    CHECK(t.jobs[0].run_time == 400);
    CHECK(t.jobs[0].time_limit == 900);
    CHECK(t.jobs[1].run_time == 600);
}

TEST_CASE("SWF: header comments, unknown fields, bad lines") {
    std::string text =
        "; Version: 2.2\n"
        "; MaxProcs: 64\n"
        "1 0 10 3600 4 -1 -1 4 7200 -1 1 7 1 -1 1 -1 -1 -1\n"
        "2 60 -1 -1 2 -1 -1 2 600 -1 5 8 1 -1 1 -1 -1 -1\n"
        "3 120 0 100 -1 -1 -1 8 -1 -1 0 9 1 -1 2 3 -1 -1\n"
        "4 180 0 100 1 -1\n"
        "5 x 0 100 1 -1 -1 1 -1 -1 1 9 1 -1 1 -1 -1 -1\n";
    Trace t = read(text, TraceFormat::Swf, true);
    REQUIRE(t.jobs.size() == 2);
    CHECK(t.jobs[0].id == 1);
    CHECK(t.jobs[0].gpus == 4);
    CHECK(t.jobs[0].run_time == 3600);
    CHECK(t.jobs[0].time_limit == 7200);
    CHECK(t.jobs[0].recorded_start == 10);
    CHECK(t.jobs[0].user == "7");
    CHECK(t.jobs[1].gpus == 8);  // requested processors when none were allocated
    CHECK(t.jobs[1].state == "FAILED");
    CHECK(t.jobs[1].partition == "3");
    CHECK(t.skipped.at("no run time") == 1);
    CHECK(t.bad == 2);
    CHECK(t.bad_lines[0].line == 6);
    CHECK(t.bad_lines[1].line == 7);
    CHECK(error_of(text, TraceFormat::Swf).find("t.log:6: 6 fields where SWF has 18") == 0);

    // Values no real log has, which would overflow a conversion (found by fuzzing): bad lines.
    std::string huge =
        "1 0 0 100 2.2e61 -1 -1 1 -1 -1 1 9 1 -1 1 -1 -1 -1\n"
        "2 0 0 100 1 -1 -1 1 -1 -1 1 9 1 -1 1 9e300 -1 -1\n"
        "3 0 0 100 2000000 -1 -1 1 -1 -1 1 9 1 -1 1 -1 -1 -1\n";
    Trace h = read(huge, TraceFormat::Swf, true);
    CHECK(h.jobs.empty());
    CHECK(h.bad == 3);
    CHECK(error_of(huge, TraceFormat::Swf).find("t.log:1: field 5 '2.2e61' is out of range") == 0);
    CHECK(error_of("3 0 0 100 2000000 -1 -1 1 -1 -1 1 9 1 -1 1 -1 -1 -1\n", TraceFormat::Swf)
              .find("t.log:1: processor count 2000000 is over 1000000") == 0);
}

TEST_CASE("Helios/Philly CSV: by header name, datetimes or seconds, intervals") {
    std::string helios =
        "job_id,user,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
        "1,u1,8,32,1,COMPLETED,2020-04-01 00:00:05,2020-04-01 00:00:10,2020-04-01 01:00:10,3600,vc1\n"
        "2,u2,0,4,1,COMPLETED,2020-04-01 00:01:00,2020-04-01 00:01:00,2020-04-01 00:02:00,60,vc1\n"
        "3,u2,2,4,1,CANCELLED,2020-04-01 00:02:00,,,0,vc2\n"
        "4,u3,two,4,1,COMPLETED,2020-04-01 00:03:00,2020-04-01 00:03:00,2020-04-01 00:04:00,60,vc1\n";
    Trace t = read(helios, TraceFormat::Helios, true);
    REQUIRE(t.jobs.size() == 2);
    CHECK(t.jobs[0].gpus == 8);
    CHECK(t.jobs[0].cpus == 32);
    CHECK(t.jobs[0].run_time == 3600);
    CHECK(t.jobs[0].partition == "vc1");
    CHECK(t.jobs[0].recorded_start - t.jobs[0].submit == 5);
    CHECK(t.jobs[1].gpus == 0);
    CHECK(t.skipped.at("ran for 0 s") == 1);
    CHECK(t.bad == 1);
    CHECK(t.bad_lines[0].line == 5);

    std::string philly =
        "u_id,user,gpu_num,cpu_num,node_num,interval,run_time\n"
        "a1,x,1,4,1,0,100\n"
        "a2,y,4,16,1,30,200\n"
        "a3,y,2,8,1,15,50\n";
    Trace p = read(philly, TraceFormat::Helios);
    REQUIRE(p.jobs.size() == 3);
    CHECK(p.jobs[1].submit == 30);
    CHECK(p.jobs[2].submit == 45);
    CHECK(p.jobs[2].run_time == 50);
    CHECK(error_of("user,duration\nx,1\n", TraceFormat::Helios).find("no GPU column") != std::string::npos);
}

TEST_CASE("Tiresias CSV: the 60-job sample's format") {
    std::string text =
        "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
        "0,1,0,606,vgg19,164,30\n"
        "1,8,30,133,vgg11,147,23\n"
        "2,x,53,157,inception4,127,26\n";
    Trace t = read(text, TraceFormat::Tiresias, true);
    REQUIRE(t.jobs.size() == 2);
    CHECK(t.jobs[1].gpus == 8);
    CHECK(t.jobs[1].submit == 30);
    CHECK(t.jobs[1].run_time == 147);
    CHECK(t.jobs[1].profile == "vgg11");
    CHECK(t.bad == 1);
    CHECK(t.bad_lines[0].line == 4);
    CHECK(error_of("job_id,gpus\n", TraceFormat::Tiresias).find("t.log:1: the header must be") == 0);
}

TEST_CASE("Gavel trace: seven tab-separated fields, catalogue names") {
    std::string text =
        "ResNet-18 (batch size 32)\tcd x && python3 main.py\t--num_steps\t1\t1000\t0.000000\t1\n"
        "A3C\tcd y\t--max-steps\t0\t500\t12.5\t2\n"
        "LM (batch size 5)\tcd z\t--steps\t1\t-3\t20\t1\n"
        "short\tline\n";
    Trace t = read(text, TraceFormat::Gavel, true);
    REQUIRE(t.jobs.size() == 2);
    CHECK(t.jobs[0].name == "ResNet-18 (batch size 32)");
    CHECK(t.jobs[0].profile == "resnet18-b32");
    CHECK(t.jobs[0].steps == 1000);
    CHECK(t.jobs[1].profile == "a3c");
    CHECK(t.jobs[1].gpus == 2);
    CHECK(t.jobs[1].submit == 12.5);
    CHECK(t.bad == 2);
    CHECK(t.bad_lines[0].why == "total_steps is not a positive number");
    CHECK(t.bad_lines[1].line == 4);
}

TEST_CASE("format detection, and the error that names the formats") {
    CHECK(detect_format("{\"format\":\"coloc-history\",\"version\":1}\n") == TraceFormat::ColocHistory);
    CHECK(detect_format(std::string(kSacctHeader)) == TraceFormat::Sacct);
    CHECK(detect_format("JobId=1 UserId=a(1) GroupId=b(2) Name=x JobState=COMPLETED\n") == TraceFormat::Jobcomp);
    CHECK(detect_format("; Version: 2.2\n1 0 0 1 1 -1 -1 1 1 -1 1 1 1 -1 1 -1 -1 -1\n") == TraceFormat::Swf);
    CHECK(detect_format("1 0 0 1 1 -1 -1 1 1 -1 1 1 1 -1 1 -1 -1 -1\n") == TraceFormat::Swf);
    CHECK(detect_format("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n") ==
          TraceFormat::Tiresias);
    CHECK(detect_format("job_id,user,gpu_num,cpu_num,node_num,state,submit_time\n") == TraceFormat::Helios);
    CHECK(detect_format("A3C\tcmd\t--steps\t0\t500\t0.0\t1\n") == TraceFormat::Gavel);
    CHECK_FALSE(detect_format("hello world\n").has_value());
    std::string e = error_of("hello world\n", std::nullopt);
    CHECK(e.find("t.log: cannot tell the format") == 0);
    CHECK(e.find("sacct, jobcomp, coloc-history, swf, helios, gavel, tiresias") != std::string::npos);
    // Detected, then read from the start.
    Trace t = [] {
        std::istringstream in(
            "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n0,1,0,6,vgg19,16,3\n");
        return read_trace(in, std::nullopt, "t.csv");
    }();
    CHECK(t.format == TraceFormat::Tiresias);
    CHECK(t.jobs.size() == 1);
    CHECK(format_from_string("coloc-history") == TraceFormat::ColocHistory);
    CHECK_FALSE(format_from_string("csv").has_value());
}

TEST_CASE("the shipped Tiresias and Gavel samples in ../shared read whole") {
    for (auto [relative, format, jobs] : {std::tuple{"data/tiresias/60_job.csv", TraceFormat::Tiresias, 60},
                                          std::tuple{"data/gavel/msr_seed0_6214e9.trace", TraceFormat::Gavel, 2000}}) {
        const std::string path = coloc::test::shared_path(relative);
        const bool found = std::ifstream(path).is_open();
        REQUIRE_MESSAGE(found, path << " not found: put the public datasets in ../shared beside the clone, or name "
                                       "their folder in COLOC_SHARED_DIR");
        Trace t = read_trace_file(path, std::nullopt);
        CHECK(t.format == format);
        CHECK(t.jobs.size() == static_cast<std::size_t>(jobs));
        CHECK(t.bad == 0);
    }
}
