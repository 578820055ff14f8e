#pragma once
// Boost.Asio and Boost.Beast, with the short names the two Beast units (http_client.cpp,
// https_server.cpp) use. Only those units include this header: Beast stays out of every other one.

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace kai::http::beast_names {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

}  // namespace kai::http::beast_names
