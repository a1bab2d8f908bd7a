#include "model/model.hpp"

namespace coloc::model {

const char* to_string(Sharing where) {
    switch (where) {
        case Sharing::Gpu:
            return "gpu";
        case Sharing::Island:
            return "island";
        case Sharing::Switch:
            return "switch";
        case Sharing::Node:
            return "node";
        case Sharing::Link:
            return "link";
    }
    return "node";
}

std::optional<Sharing> sharing_from_string(const std::string& text) {
    for (Sharing s : {Sharing::Gpu, Sharing::Island, Sharing::Switch, Sharing::Node, Sharing::Link})
        if (text == to_string(s)) return s;
    return std::nullopt;
}

}  // namespace coloc::model
