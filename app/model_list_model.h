// The model manager's table: every catalog entry (installed or not) and every
// other GGUF in the models folder or opened from elsewhere, with its status,
// size, weight format, architecture and licence.
#pragma once

#include <QAbstractTableModel>

#include <optional>
#include <vector>

#include "models/catalog.h"

namespace hearth::app {

class ModelListModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kName, kStatus, kSize, kFormat, kArchitecture, kLicense, kColumns };
  enum Role { kPathRole = Qt::UserRole + 1, kInstalledRole, kCatalogNameRole, kInModelsDirRole };

  explicit ModelListModel(models::Catalog catalog, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  void refresh();                           // re-reads the models folder
  void addOpenedFile(const QString& path);  // a GGUF outside the folder, listed from the next refresh()
  // The row of an install in progress shows its percentage (-1: none running).
  void setInstalling(const QString& catalog_name, int percent);
  const models::CatalogEntry* entryAt(int row) const;
  const models::Catalog& catalog() const { return catalog_; }
  int rowOfCatalogName(const QString& name) const;

 private:
  struct Row {
    std::optional<models::CatalogEntry> entry;
    QString path;  // where the file is (or would be, for an entry not installed)
    bool installed = false;
    bool in_models_dir = true;
    qint64 size = 0;
    QString format, architecture, license;
  };
  Row fileRow(const QString& path, bool in_models_dir) const;
  QString statusText(const Row& row) const;

  models::Catalog catalog_;
  std::vector<Row> rows_;
  QStringList opened_;
  QString installing_;
  int percent_ = -1;
};

}  // namespace hearth::app
