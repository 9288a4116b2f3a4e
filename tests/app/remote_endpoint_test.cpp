// A remote OpenAI-compatible endpoint as the app's model: a small HTTP server
// in this process (cpp-httplib, loopback, a free port) lists one model and
// streams a fixed answer (or cuts it after one piece); the real EngineBridge
// connects to it, the chat controller sends a message through it into a real
// store, and the model bar, the chat view and the endpoint dialog show what
// they should. Main windows on a settings file remember the endpoint,
// reconnect to it at start, and fall back to a tiny local model when it does
// not answer. Every wait is a QTRY_*.
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QUrl>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include "app/banner.h"
#include "app/chat_controller.h"
#include "app/chat_model.h"
#include "app/chat_rows.h"
#include "app/chat_view.h"
#include "app/engine_bridge.h"
#include "app/main_window.h"
#include "app/model_bar.h"
#include "app/remote_endpoint_dialog.h"
#include "app/storage_service.h"
#include "models/synthetic.h"
#include "settings/settings.h"
#include "test_env.h"

using namespace hearth::app;
namespace store = hearth::store;

namespace {

// Chunks of a streamed chat answer, as an OpenAI server sends them.
std::string sse_chunk(const std::string& json) {
  return "data: " + json + "\n\n";
}

class FakeOpenAi {
 public:
  FakeOpenAi() {
    server_.Get("/v1/models", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard lock(mutex_);
        authorization_ = req.get_header_value("Authorization");
      }
      res.set_content(R"({"object":"list","data":[{"id":"fake-remote","object":"model"}]})", "application/json");
    });
    server_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
      last_body = req.body;
      const bool cut_now = cut;
      res.set_chunked_content_provider("text/event-stream", [cut_now](std::size_t, httplib::DataSink& sink) {
        for (const char* piece : {"Hello", " from", " afar"}) {
          const std::string c = sse_chunk(std::string(R"({"choices":[{"index":0,"delta":{"content":")") + piece +
                                          R"("},"finish_reason":null}]})");
          sink.write(c.data(), c.size());
          if (cut_now) return false;  // the connection goes away after the first piece
        }
        const std::string end = sse_chunk(R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})") +
                                sse_chunk(R"({"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}})") +
                                "data: [DONE]\n\n";
        sink.write(end.data(), end.size());
        sink.done();
        return true;
      });
    });
    port_ = server_.bind_to_any_port("127.0.0.1");  // listening from here on: connects wait in the backlog
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeOpenAi() {
    server_.stop();
    thread_.join();
  }
  QString url() const { return QStringLiteral("http://127.0.0.1:%1").arg(port_); }

  std::string last_body;
  std::atomic<bool> cut{false};  // the next answers stop after one piece, the connection closed
  std::string authorization() {  // of the last GET /v1/models
    std::lock_guard lock(mutex_);
    return authorization_;
  }

 private:
  std::mutex mutex_;
  std::string authorization_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// A loopback port nothing listens on (bound to learn a free one, then closed).
int dead_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

}  // namespace

class RemoteEndpointTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    hearth::models::SyntheticSpec spec;  // the local model of the windows below (tiny, fast on the CPU)
    spec.shape = {"custom", 128, 2, 4, 2, 256, 300, 512, 10000.0f, 1e-5f, false};
    spec.quant = hearth::models::parse_synthetic_quant("Q8_0").value();
    local_model_ = models_dir_.filePath(QStringLiteral("tiny-q8_0.gguf"));
    QVERIFY(hearth::models::write_synthetic_model(spec, local_model_.toStdString()).ok());
  }

  void init() {
    fake_ = std::make_unique<FakeOpenAi>();
    dir_ = std::make_unique<QTemporaryDir>();
    bridge_ = std::make_unique<EngineBridge>();
  }
  void cleanup() {
    bridge_.reset();
    dir_.reset();
    fake_.reset();
  }

  void aConversationThroughTheEndpointIsStoredWithIt() {
    const LoadedModel m = connect(fake_->url());
    QCOMPARE(m.endpoint, fake_->url() + QStringLiteral("/v1"));
    QCOMPARE(m.device, m.endpoint);
    QCOMPARE(m.name, QStringLiteral("fake-remote"));
    QVERIFY(!m.continues);  // its /models names no owner that honours continue_final_message
    ModelBar bar;
    bar.setLoaded(m);
    const auto* device = bar.findChild<QLabel*>(QStringLiteral("deviceLabel"));
    QVERIFY(device);
    QCOMPARE(device->text(), QStringLiteral("Remote: 127.0.0.1:%1").arg(QUrl(fake_->url()).port()));
    QVERIFY(device->toolTip().contains(m.endpoint));

    StorageService storage(dir_->filePath(QStringLiteral("test.db")));
    {
      ChatController controller(&storage, bridge_.get());
      controller.send(QStringLiteral("Hi there"));
      QTRY_VERIFY(controller.generating());
      QTRY_VERIFY_WITH_TIMEOUT(!controller.generating(), 30000);
      std::optional<ConversationPath> path;
      const store::Id conv = controller.currentConversation();
      storage.run(
          this, QStringLiteral("reading back"), [conv](store::Store& s) { return load_path(s, conv); },
          [&path](ConversationPath p) { path = std::move(p); });
      QTRY_VERIFY(path.has_value());
      QCOMPARE(path->rows.size(), std::size_t{2});
      QCOMPARE(path->rows[1].message.content, std::string("Hello from afar"));
      QVERIFY(path->rows[1].generation.has_value());
      const store::GenerationRecord& g = *path->rows[1].generation;
      QCOMPARE(QString::fromStdString(g.device), m.endpoint);  // the record names the endpoint
      QCOMPARE(g.model_name, std::string("fake-remote"));
      QCOMPARE(g.model_path, std::string());
      QCOMPARE(g.prompt_tokens, std::int64_t{7});
      QCOMPARE(g.generated_tokens, std::int64_t{3});
      QCOMPARE(g.finish_reason, std::string("stop"));
      QVERIFY(fake_->last_body.find("Hi there") != std::string::npos);
    }
    storage.waitForIdle();
  }

  // A stream cut part-way: the answer keeps its text, marked interrupted, and
  // its record and the chat view say why, naming the endpoint.
  void aCutStreamKeepsTheTextAndShowsWhy() {
    const LoadedModel m = connect(fake_->url());
    fake_->cut = true;
    StorageService storage(dir_->filePath(QStringLiteral("test.db")));
    {
      ChatController controller(&storage, bridge_.get());
      ChatView view(controller.chatModel());
      view.resize(600, 400);
      view.show();
      controller.send(QStringLiteral("Tell me"));
      QTRY_VERIFY(controller.generating());
      QTRY_VERIFY_WITH_TIMEOUT(!controller.generating(), 30000);
      std::optional<ConversationPath> path;
      const store::Id conv = controller.currentConversation();
      storage.run(
          this, QStringLiteral("reading back"), [conv](store::Store& s) { return load_path(s, conv); },
          [&path](ConversationPath p) { path = std::move(p); });
      QTRY_VERIFY(path.has_value());
      QCOMPARE(path->rows.size(), std::size_t{2});
      const ChatRow& answer = path->rows[1];
      QCOMPARE(answer.message.content, std::string("Hello"));
      QVERIFY(answer.message.state == store::MessageState::kInterrupted);
      QVERIFY(answer.generation.has_value());
      QCOMPARE(answer.generation->finish_reason, std::string("error"));
      const QString why = QString::fromStdString(answer.generation->error);
      QVERIFY2(why.contains(QStringLiteral("was cut before the answer finished")) && why.contains(m.endpoint),
               qPrintable(why));
      QCOMPARE(controller.chatModel()->index(1).data(ChatModel::kErrorRole).toString(), why);
      QLabel* shown = nullptr;
      QTRY_VERIFY([&] {
        for (auto* label : view.findChildren<QLabel*>(QStringLiteral("statsLabel"))) {
          if (label->text().contains(QStringLiteral("was cut before the answer finished"))) shown = label;
        }
        return shown != nullptr;
      }());
      QVERIFY2(shown->text().startsWith(QStringLiteral("interrupted: ")), qPrintable(shown->text()));
      QCOMPARE(shown->toolTip(), why);
    }
    storage.waitForIdle();
  }

  void anUnreachableEndpointFailsAndKeepsTheModel() {
    const LoadedModel m = connect(fake_->url());
    QSignalSpy failed(bridge_.get(), &EngineBridge::loadFailed);
    QSignalSpy loaded(bridge_.get(), &EngineBridge::modelLoaded);
    const QString dead = QStringLiteral("http://127.0.0.1:%1").arg(dead_port());
    bridge_->connectRemote(dead, {}, {});
    QTRY_COMPARE(failed.count(), 1);
    QVERIFY2(failed.at(0).at(1).toString().contains(QStringLiteral("cannot reach ") + dead),
             qPrintable(failed.at(0).at(1).toString()));
    QTRY_COMPARE(loaded.count(), 1);  // the remote model in use stays
    QCOMPARE(bridge_->model()->endpoint, m.endpoint);
    bridge_->connectRemote(fake_->url(), {}, QStringLiteral("other"));
    QTRY_COMPARE(failed.count(), 2);
    QVERIFY2(failed.at(1).at(1).toString().contains(QStringLiteral("does not serve a model 'other'")),
             qPrintable(failed.at(1).at(1).toString()));
  }

  // The endpoint in use is remembered (URL and model, never the key), the app
  // reconnects to it at start with $HEARTH_API_KEY, and a local model the user
  // loads ends that.
  void theLastEndpointIsRememberedAndUsedAgainAtStart() {
    qputenv("HEARTH_API_KEY", "sekrit-key");
    const QString settings_path = writeSettings({});
    {
      auto window = makeWindow(settings_path, false);
      QSignalSpy loaded(window->engine(), &EngineBridge::modelLoaded);
      window->engine()->connectRemote(fake_->url(), environment_api_key(), {});
      QTRY_COMPARE(loaded.count(), 1);
      const auto saved = savedSettings(settings_path);
      QCOMPARE(QString::fromStdString(saved.remote_url), fake_->url() + QStringLiteral("/v1"));
      QCOMPARE(saved.remote_model, std::string("fake-remote"));
      QVERIFY(saved.remote_in_use);
      QVERIFY(!readText(settings_path).contains(QStringLiteral("sekrit")));  // the key is never written
    }
    {
      auto window = makeWindow(settings_path, true);  // a restart: back on the endpoint
      QTRY_VERIFY(window->engine()->model().has_value());
      QCOMPARE(window->engine()->model()->endpoint, fake_->url() + QStringLiteral("/v1"));
      QCOMPARE(QString::fromStdString(fake_->authorization()), QStringLiteral("Bearer sekrit-key"));
      QSignalSpy loaded(window->engine(), &EngineBridge::modelLoaded);
      emit window->findChild<ModelBar*>()->loadRequested(local_model_);  // the user picks a local model
      QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
      QVERIFY(window->engine()->model()->endpoint.isEmpty());
      const auto saved = savedSettings(settings_path);
      QVERIFY(!saved.remote_in_use);  // the next start is local
      QCOMPARE(QString::fromStdString(saved.remote_url), fake_->url() + QStringLiteral("/v1"));  // still offered
    }
    qunsetenv("HEARTH_API_KEY");
  }

  // The endpoint the app was on does not answer at start: the local model loads
  // instead with a banner saying why; the endpoint stays remembered, and the
  // dialog offers it again.
  void anUnreachableLastEndpointFallsBackToTheLocalModel() {
    const QString dead = QStringLiteral("http://127.0.0.1:%1/v1").arg(dead_port());
    const QString settings_path = writeSettings({{"base_url", dead.toStdString()}, {"model", "big"}, {"in_use", true}});
    auto window = makeWindow(settings_path, true);
    QTRY_VERIFY_WITH_TIMEOUT(window->engine()->model().has_value(), 30000);
    QVERIFY(window->engine()->model()->endpoint.isEmpty());
    QCOMPARE(window->engine()->model()->path, local_model_);
    const QString text = window->banner()->text();
    QVERIFY2(text.contains(QStringLiteral("cannot reach ") + dead) && text.contains(QStringLiteral("local model")),
             qPrintable(text));
    const auto saved = savedSettings(settings_path);
    QCOMPARE(QString::fromStdString(saved.remote_url), dead);
    QVERIFY(saved.remote_in_use);  // not the user's choice: the next start tries the endpoint again

    bool checked = false;
    QTimer::singleShot(0, this, [&] {
      RemoteEndpointDialog* dialog = nullptr;
      for (QWidget* w : QApplication::topLevelWidgets()) {
        if (auto* d = qobject_cast<RemoteEndpointDialog*>(w); d && d->isVisible()) dialog = d;
      }
      QVERIFY(dialog);
      const auto close = qScopeGuard([dialog] { dialog->reject(); });  // whatever fails below
      checked = true;
      QCOMPARE(dialog->url(), dead);  // pre-filled from the settings
      QCOMPARE(dialog->model(), QStringLiteral("big"));
      const auto* note = dialog->findChild<QLabel*>(QStringLiteral("remoteKeyNote"));
      QVERIFY(note && note->text().contains(QStringLiteral("never saved")));
    });
    emit window->findChild<ModelBar*>()->remoteRequested();
    QVERIFY(checked);
  }

  void theDialogListsTheEndpointsModels() {
    RemoteEndpointDialog dialog(nullptr, fake_->url());
    QSignalSpy listed(&dialog, &RemoteEndpointDialog::modelsListed);
    dialog.listModels();
    QTRY_COMPARE(listed.count(), 1);
    auto* model = dialog.findChild<QComboBox*>(QStringLiteral("remoteModel"));
    QCOMPARE(model->count(), 1);
    QCOMPARE(dialog.model(), QStringLiteral("fake-remote"));
    auto* url = dialog.findChild<QLineEdit*>(QStringLiteral("remoteUrl"));
    url->setText(QStringLiteral("ftp://nowhere"));
    dialog.listModels();
    auto* status = dialog.findChild<QLabel*>(QStringLiteral("remoteStatus"));
    QTRY_VERIFY2(status->text().contains(QStringLiteral("must be http or https")), qPrintable(status->text()));
  }

  void theDeviceMenuOffersARemoteEndpoint() {
    ModelBar bar;
    bar.setDeviceLister([] { return std::vector<hearth::DeviceInfo>{}; });
    QSignalSpy requested(&bar, &ModelBar::remoteRequested);
    QMetaObject::invokeMethod(bar.deviceMenu(), "aboutToShow");
    auto* action = bar.deviceMenu()->findChild<QAction*>(QStringLiteral("remoteEndpointAction"));
    QVERIFY(action);
    action->trigger();
    QCOMPARE(requested.count(), 1);
  }

 private:
  // A settings file: the tiny local model on the CPU, and `remote` as its remote_endpoint (when given).
  QString writeSettings(const nlohmann::json& remote) {
    nlohmann::json doc = {
        {"version", 1}, {"last_model", local_model_.toStdString()}, {"device", "cpu"}, {"context_length", 256}};
    if (!remote.empty()) doc["remote_endpoint"] = remote;
    const QString path = dir_->filePath(QStringLiteral("settings.json"));
    std::ofstream(path.toStdString()) << doc.dump(2);
    return path;
  }
  static hearth::settings::Settings savedSettings(const QString& path) {
    auto loaded = hearth::settings::load_settings(path.toStdString());
    return loaded ? loaded->settings : hearth::settings::Settings{};
  }
  static QString readText(const QString& path) {
    std::ifstream in(path.toStdString());
    return QString::fromStdString(std::string(std::istreambuf_iterator<char>(in), {}));
  }
  std::unique_ptr<MainWindow> makeWindow(const QString& settings_path, bool load_model) {
    MainWindowOptions options;
    options.database_path = dir_->filePath(QStringLiteral("window.db"));
    options.settings_path = settings_path;
    options.load_model = load_model;
    options.restore_state = false;
    auto window = std::make_unique<MainWindow>(options);
    window->show();
    return window;
  }

  LoadedModel connect(const QString& url) {
    QSignalSpy loaded(bridge_.get(), &EngineBridge::modelLoaded);
    bridge_->connectRemote(url, {}, {});
    [&] { QTRY_COMPARE(loaded.count(), 1); }();
    return loaded.isEmpty() ? LoadedModel{} : loaded.at(0).at(0).value<LoadedModel>();
  }

  QTemporaryDir models_dir_;
  QString local_model_;
  std::unique_ptr<FakeOpenAi> fake_;
  std::unique_ptr<QTemporaryDir> dir_;
  std::unique_ptr<EngineBridge> bridge_;
};

HEARTH_APP_TEST_MAIN(RemoteEndpointTest)
#include "remote_endpoint_test.moc"
