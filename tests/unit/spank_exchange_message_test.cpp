// The one message a place request's forked child sends its parent: every field and every error
// comes back as it was written; anything else on the pipe is not a message.
#include <doctest/doctest.h>

#include "spank/exchange_message.hpp"

using namespace coloc::spank;
using coloc::proto::GpuMode;

TEST_CASE("spank: the child's message round trip, with each error") {
    for (ExchangeError e : {ExchangeError::None, ExchangeError::NotRunning, ExchangeError::Unavailable,
                            ExchangeError::BadReply, ExchangeError::Refused, ExchangeError::Internal}) {
        CAPTURE(error_name(e));
        ExchangeMessage m;
        m.slots = 2;
        m.error = e;
        m.code = e == ExchangeError::Refused ? "forbidden" : "";
        m.message = "why, with \"quotes\"\nand a newline";
        const std::string line = encode(m);
        CHECK(line.find('\n') == std::string::npos);
        const auto back = decode(line);
        REQUIRE(back.has_value());
        CHECK(back->error == e);
        CHECK(back->slots == 2);
        CHECK(back->code == m.code);
        CHECK(back->message == m.message);
        CHECK_FALSE(back->reply.has_value());
    }
    CHECK(std::string(error_name(ExchangeError::NotRunning)) == "not_running");
}

TEST_CASE("spank: the child's message carries colocd's reply, the slot count and a skip") {
    ExchangeMessage m;
    m.reply = coloc::proto::PlaceReply{.decision = 7,
                                       .mode = GpuMode::Bind,
                                       .gpus = {1, 3},
                                       .predicted_slowdown = 1.5,
                                       .reused = true,
                                       .durability = "queued"};
    const auto back = decode(encode(m));
    REQUIRE(back.has_value());
    REQUIRE(back->reply.has_value());
    CHECK(back->reply->decision == 7);
    CHECK(back->reply->mode == GpuMode::Bind);
    CHECK(back->reply->gpus == std::vector<int>{1, 3});
    CHECK(back->reply->reused);
    CHECK(back->reply->durability == "queued");
    CHECK(back->slots == -1);
    CHECK(back->error == ExchangeError::None);

    ExchangeMessage s;
    s.slots = -1;
    s.slots_why = "slurm_load_job: timeout";
    CHECK(decode(encode(s))->slots_why == "slurm_load_job: timeout");
    s.slots = 0;
    s.skip = true;
    CHECK(decode(encode(s))->skip);
}

TEST_CASE("spank: what is not the child's message decodes to nothing") {
    for (const char* bad :
         {"", "slots", "{}", "[1]", R"({"slots":1,"skip":false})", R"({"slots":1,"skip":false,"error":"gone"})",
          R"({"slots":"1","skip":false,"error":"none"})",
          R"({"slots":1,"skip":false,"error":"none","reply":{"gpus":[1]}})"}) {
        CAPTURE(bad);
        CHECK_FALSE(decode(bad).has_value());
    }
}
