// The view models without a window: ChatModel, ConversationListModel,
// StatsHistoryModel and LogModel.
#include <QApplication>
#include <QSignalSpy>
#include <QTest>

#include "app/chat_model.h"
#include "app/conversation_list_model.h"
#include "app/log_model.h"
#include "app/stats_history_model.h"
#include "engine/core/log.h"
#include "test_env.h"

using namespace hearth::app;
namespace store = hearth::store;

namespace {

ChatRow row(store::Id id, store::Role role, const char* text, int index, std::vector<store::Id> siblings) {
  ChatRow r;
  r.message.id = id;
  r.message.conversation_id = 7;
  r.message.role = role;
  r.message.content = text;
  r.sibling_index = index;
  r.sibling_count = static_cast<int>(siblings.size());
  r.sibling_ids = std::move(siblings);
  return r;
}

store::Conversation conversation(store::Id id, const char* title, store::TimeMs updated) {
  store::Conversation c;
  c.id = id;
  c.title = title;
  c.updated_ms = updated;
  return c;
}

}  // namespace

class ViewModelsTest : public QObject {
  Q_OBJECT

 private slots:
  void chatModelShowsThePath() {
    ChatModel model;
    ConversationPath path;
    path.conversation_id = 7;
    path.rows.push_back(row(1, store::Role::kUser, "Hi", 0, {1}));
    path.rows.push_back(row(4, store::Role::kAssistant, "Hello", 1, {2, 4, 5}));
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    model.setPath(path);
    QCOMPARE(reset.count(), 1);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.conversationId(), 7);
    const QModelIndex answer = model.index(1);
    QCOMPARE(answer.data(ChatModel::kRoleRole).toString(), QStringLiteral("assistant"));
    QCOMPARE(answer.data(ChatModel::kTextRole).toString(), QStringLiteral("Hello"));
    QCOMPARE(answer.data(ChatModel::kSiblingIndexRole).toInt(), 2);
    QCOMPARE(answer.data(ChatModel::kSiblingCountRole).toInt(), 3);
    QCOMPARE(answer.data(ChatModel::kStatsRole).toString(), QString());
    QCOMPARE(model.siblingAt(4, -1), 2);
    QCOMPARE(model.siblingAt(4, +1), 5);
    QCOMPARE(model.siblingAt(4, +2), 0);
    QCOMPARE(model.siblingAt(1, -1), 0);
    QCOMPARE(model.rowOf(99), -1);
  }

  void chatModelStreamsInPlace() {
    ChatModel model;
    ConversationPath path;
    path.conversation_id = 7;
    path.rows.push_back(row(1, store::Role::kUser, "Hi", 0, {1}));
    auto answer = row(2, store::Role::kAssistant, "", 0, {2});
    answer.message.state = store::MessageState::kStreaming;
    path.rows.push_back(answer);
    model.setPath(path);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.appendText(2, QStringLiteral("Hel"));
    model.appendText(2, QStringLiteral("lo \u00e9"));
    model.appendText(99, QStringLiteral("ignored"));
    QCOMPARE(changed.count(), 2);
    QCOMPARE(changed.at(0).at(0).toModelIndex().row(), 1);
    QCOMPARE(model.index(1).data(ChatModel::kTextRole).toString(), QStringLiteral("Hello \u00e9"));
    QVERIFY(model.index(1).data(ChatModel::kStreamingRole).toBool());

    store::GenerationRecord g;
    g.generated_tokens = 16;
    g.ttft_ms = 41.6;
    g.decode_tok_s = 95.14;
    g.cached_tokens = 12;
    g.finish_reason = "length";
    model.setFinished(2, store::MessageState::kComplete, g);
    QVERIFY(!model.index(1).data(ChatModel::kStreamingRole).toBool());
    QCOMPARE(model.index(1).data(ChatModel::kStatsRole).toString(),
             QStringLiteral("16 tokens \u00b7 TTFT 42 ms \u00b7 95.1 tok/s \u00b7 12 cached \u00b7 length: stopped at "
                            "the token limit"));
    g.finish_reason = "cancelled";
    g.cached_tokens = 0;
    g.generated_tokens = 1;
    QCOMPARE(ChatModel::statsLine(g), QStringLiteral("1 tokens \u00b7 TTFT 42 ms \u00b7 95.1 tok/s \u00b7 stopped"));
  }

  void conversationListSortsByRecent() {
    ConversationListModel model;
    model.setConversations({conversation(1, "old", 100), conversation(2, "new", 300), conversation(3, "mid", 200),
                            conversation(4, "tie", 200)});
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(model.idAt(0), 2);
    QCOMPARE(model.idAt(1), 4);  // same time as 3: newer id first
    QCOMPARE(model.idAt(2), 3);
    QCOMPARE(model.idAt(3), 1);
    QCOMPARE(model.idAt(4), 0);

    QSignalSpy moved(&model, &QAbstractItemModel::rowsMoved);
    model.touch(1, QStringLiteral("old"), 400);
    QCOMPARE(moved.count(), 1);
    QCOMPARE(model.idAt(0), 1);
    QCOMPARE(model.idAt(1), 2);
    model.touch(9, QStringLiteral("brand new"), 500);
    QCOMPARE(model.rowCount(), 5);
    QCOMPARE(model.index(0).data(Qt::DisplayRole).toString(), QStringLiteral("brand new"));

    model.rename(2, QStringLiteral("renamed"));
    QCOMPARE(model.titleOf(2), QStringLiteral("renamed"));
    model.remove(3);
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(model.rowOf(3), -1);
  }

  void conversationListShowsSearchHits() {
    ConversationListModel model;
    store::Conversation gone = conversation(5, "deleted", 900);
    gone.deleted_ms = 901;
    model.setConversations({conversation(1, "a", 1), gone});
    QCOMPARE(model.rowCount(), 1);  // the trash is not listed
    store::SearchHit hit;
    hit.conversation_id = 8;
    hit.title = "Rust questions";
    hit.updated_ms = 50;
    hit.snippet = "about [borrowing] rules";
    model.setSearchHits({hit});
    QVERIFY(model.showingSearch());
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.index(0).data(ConversationListModel::kSnippetRole).toString(),
             QStringLiteral("about [borrowing] rules"));
    QCOMPARE(model.index(0).data(Qt::ToolTipRole).toString(), QStringLiteral("about [borrowing] rules"));
    model.touch(99, QStringLiteral("not a hit"), 1000);  // a search result list does not grow
    QCOMPARE(model.rowCount(), 1);
  }

  void statsHistoryKeepsAWindow() {
    StatsHistoryModel model;
    for (int i = 0; i < StatsHistoryModel::kCapacity + 5; ++i) {
      StatsSample s;
      s.time_s = i * 0.25;
      s.stats.decode_tps = i;
      s.stats.memory.weights = 100u << 20;
      s.stats.memory.kv_pool = 30u << 20;
      s.stats.memory.workspace = 10u << 20;
      s.rss_bytes = std::int64_t{200} << 20;
      s.stats.kv_blocks_used = 3;
      s.stats.prefix_hit_rate = 0.25;
      model.append(s);
    }
    QCOMPARE(model.rowCount(), StatsHistoryModel::kCapacity);
    QCOMPARE(model.columnCount(), static_cast<int>(StatsHistoryModel::kColumnCount));
    QCOMPARE(model.value(0, StatsHistoryModel::kDecodeTps), 5.0);  // the 5 oldest went
    QCOMPARE(model.value(0, StatsHistoryModel::kWeightsMiB), 100.0);
    QCOMPARE(model.value(0, StatsHistoryModel::kOtherMiB), 60.0);  // RSS 200 - (100 + 30 + 10)
    QCOMPARE(model.value(0, StatsHistoryModel::kDeviceFreeMiB), 0.0);
    QCOMPARE(model.value(0, StatsHistoryModel::kPrefixHitPct), 25.0);
    QCOMPARE(model.index(0, StatsHistoryModel::kKvUsed).data().toDouble(), 3.0);
    QVERIFY(!model.onDevice());

    GenerationDone done;
    done.usage.generated_tokens = 16;
    done.usage.ttft_ms = 33;
    model.addAnswer(done);
    done.usage.generated_tokens = 0;  // nothing generated: no point on the chart
    model.addAnswer(done);
    QCOMPARE(model.answers().size(), std::size_t{1});
    QCOMPARE(model.answers().front().ttft_ms, 33.0);
    QCOMPARE(model.answers().front().time_s, (StatsHistoryModel::kCapacity + 4) * 0.25);
  }

  void statsHistoryOnDevice() {
    StatsHistoryModel model;
    StatsSample s;
    s.stats.memory.weights = 1000u << 20;
    s.stats.memory.kv_pool = 500u << 20;
    s.stats.memory.device_total = std::size_t{8000} << 20;
    s.stats.memory.device_free = std::size_t{6000} << 20;
    model.append(s);
    QVERIFY(model.onDevice());
    QCOMPARE(model.value(0, StatsHistoryModel::kOtherMiB), 500.0);  // used 2000 - 1500 known
    QCOMPARE(model.value(0, StatsHistoryModel::kDeviceFreeMiB), 6000.0);
  }

  void logModelReceivesSpdlogLines() {
    LogModel model;
    auto sink = make_log_sink(&model);
    hearth::log::add_sink(sink);
    hearth::log::get("apptest")->warn("disk {} is full", "/tmp");
    QTRY_COMPARE(model.rowCount(), 1);
    const QString line = model.index(0).data().toString();
    QVERIFY2(line.contains(QStringLiteral("[apptest] disk /tmp is full")), qPrintable(line));
    QCOMPARE(model.index(0).data(LogModel::kLevelRole).toInt(), static_cast<int>(spdlog::level::warn));
    hearth::log::remove_sink(sink);

    for (int i = 0; i < LogModel::kMaxLines + 10; ++i) model.appendLine(QString::number(i), 2);
    QVERIFY(model.rowCount() <= LogModel::kMaxLines);
    QCOMPARE(model.index(model.rowCount() - 1).data().toString(), QString::number(LogModel::kMaxLines + 9));
  }
};

HEARTH_APP_TEST_MAIN(ViewModelsTest)
#include "view_models_test.moc"
