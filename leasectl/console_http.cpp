#include "leasectl/console_http.hpp"

#include <cstdio>

namespace leasefs::leasectl {

namespace {

std::string cookie_token(const httplib::Request& req, const std::string& cookie) {
  const std::string cookies = req.get_header_value("Cookie");
  const std::string key = cookie + "=";
  size_t pos = 0;
  while (pos < cookies.size()) {
    size_t end = cookies.find(';', pos);
    if (end == std::string::npos) end = cookies.size();
    std::string part = cookies.substr(pos, end - pos);
    part.erase(0, part.find_first_not_of(' '));
    if (part.compare(0, key.size(), key) == 0) return part.substr(key.size());
    pos = end + 1;
  }
  return "";
}

// Every request: this console's Host, its own Origin if any, and the token.
httplib::Server::HandlerResponse screen(const ConsoleGuard& guard, const std::string& cookie,
                                        const httplib::Request& req, httplib::Response& res) {
  if (!guard.host_ok(req.get_header_value("Host"))) {
    refuse(res, 403, "wrong Host");
    return httplib::Server::HandlerResponse::Handled;
  }
  if (req.has_header("Origin") && !guard.origin_ok(req.get_header_value("Origin"))) {
    refuse(res, 403, "wrong Origin");
    return httplib::Server::HandlerResponse::Handled;
  }
  if (req.method == "POST") {
    // An action carries the token in a header, which no other site can set,
    // and comes from this page.
    if (!guard.origin_ok(req.get_header_value("Origin"))) {
      refuse(res, 403, "an action needs this console's Origin");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!guard.token_ok(req.get_header_value(kConsoleTokenHeader))) {
      refuse(res, 401, "an action needs the token in the X-Console-Token header");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.get_header_value("Content-Type").rfind("application/json", 0) != 0) {
      refuse(res, 415, "an action is a JSON body");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  }
  if (req.method != "GET") {
    refuse(res, 405, "GET or POST");
    return httplib::Server::HandlerResponse::Handled;
  }
  if (!guard.token_ok(req.get_param_value("token")) && !guard.token_ok(cookie_token(req, cookie)) &&
      !guard.token_ok(req.get_header_value(kConsoleTokenHeader))) {
    refuse(res, 401, "this console needs its token: open the URL leasectl console printed");
    return httplib::Server::HandlerResponse::Handled;
  }
  return httplib::Server::HandlerResponse::Unhandled;
}

}  // namespace

void refuse(httplib::Response& res, int status, const std::string& why) {
  res.status = status;
  res.set_content(why + "\n", "text/plain; charset=utf-8");
}

std::optional<Listening> bind_console(httplib::Server& server, const std::string& listen,
                                      const char* command, int& exit_code) {
  exit_code = 2;
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    std::fprintf(stderr, "%s: --listen takes ADDR:PORT, not '%s'\n", command, listen.c_str());
    return std::nullopt;
  }
  std::string host = listen.substr(0, colon);
  if (host.size() > 1 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  int port = 0;
  try {
    port = std::stoi(listen.substr(colon + 1));
  } catch (const std::exception&) {
    port = -1;
  }
  if (port < 0 || port > 65535) {
    std::fprintf(stderr, "%s: '%s' is not a port\n", command, listen.substr(colon + 1).c_str());
    return std::nullopt;
  }
  const int bound =
      port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound <= 0) {
    exit_code = 1;
    std::fprintf(stderr, "%s: cannot listen on %s\n", command, listen.c_str());
    return std::nullopt;
  }
  return Listening{host, bound};
}

void guard_every_request(httplib::Server& server, const ConsoleGuard& guard,
                         const std::string& cookie) {
  server.set_default_headers({
      {"Content-Security-Policy",
       "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
      {"X-Content-Type-Options", "nosniff"},
      {"X-Frame-Options", "DENY"},
      {"Referrer-Policy", "no-referrer"},
      {"Cache-Control", "no-store"},
  });
  server.set_pre_routing_handler(
      [&guard, cookie](const httplib::Request& req, httplib::Response& res) {
        return screen(guard, cookie, req, res);
      });
}

void serve_console_page(httplib::Server& server, const ConsoleGuard& guard,
                        const std::string& cookie, std::string_view html) {
  server.Get("/", [&guard, cookie, html](const httplib::Request& req, httplib::Response& res) {
    if (req.has_param("token")) {
      // Into a cookie, and out of the address bar and the history.
      res.set_header("Set-Cookie",
                     cookie + "=" + guard.token() + "; Path=/; HttpOnly; SameSite=Strict");
      res.set_redirect("/", 303);
      return;
    }
    std::string page(html);
    const std::string mark = "@TOKEN@";
    page.replace(page.find(mark), mark.size(), guard.token());
    res.set_content(page, "text/html; charset=utf-8");
  });
}

std::string console_url(const Listening& at, const ConsoleGuard& guard) {
  const std::string shown = at.host.find(':') != std::string::npos ? "[" + at.host + "]" : at.host;
  return "http://" + shown + ":" + std::to_string(at.port) + "/?token=" + guard.token();
}

}  // namespace leasefs::leasectl
