// gavel-convert GAVEL_JSON [OUT_CSV]: Gavel's measured throughputs -> coloc measurement CSV
// (the format `colocctl fit` reads, man/coloc-profiles.5). Used by bench/model-accuracy.
#include <fstream>
#include <iostream>

#include "model/io/gavel_json.hpp"
#include "model/io/measurements_csv.hpp"

int main(int argc, char** argv) {
    if (argc < 2 || argc > 3) {
        std::cerr << "usage: gavel-convert GAVEL_THROUGHPUTS_JSON [OUT_CSV]\n";
        return 2;
    }
    try {
        const auto m = coloc::model::io::read_gavel_json(argv[1]);
        std::ofstream file;
        if (argc == 3) {
            file.open(argv[2]);
            if (!file) throw std::runtime_error(std::string(argv[2]) + ": cannot write");
        }
        std::ostream& out = argc == 3 ? file : std::cout;
        out << "# Converted by bench/gavel-convert from Gavel's " << argv[1] << "\n"
            << "# Gavel (stanford-futuredata/gavel), MIT License, Copyright (c) 2020 Stanford Future Data Systems.\n"
            << "# Throughputs in iterations per second; pair rows: the job's throughput beside the neighbour.\n";
        coloc::model::io::write_measurements_csv(out, m);
        std::cerr << "gavel-convert: " << m.solo.size() << " solo rows, " << m.pairs.size() << " pair rows\n";
    } catch (const std::exception& e) {
        std::cerr << "gavel-convert: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
