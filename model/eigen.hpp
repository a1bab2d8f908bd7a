// Eigen through its Debian path: the Makefile adds only -I. to the include path, and
// <eigen3/Eigen/Dense> resolves from /usr/include with Eigen's own relative includes intact.
#pragma once

#include <eigen3/Eigen/Dense>
