// colocctl: inspect colocd, predict and fit the model, replay job logs (ctl/cli.cpp).
#include "ctl/cli.hpp"

int main(int argc, char** argv) { return coloc::ctl::colocctl_main(argc, argv); }
